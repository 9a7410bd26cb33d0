import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// A search's statement stops on the server when its caller is cancelled (a request past its deadline,
/// issue 37): the backend is freed at once instead of running the statement out.
@Suite(.serialized)
struct PgvectorCancellationTests {
    @Test func aCancelledSearchStopsItsStatementOnTheServer() async throws {
        let postgres = try await PostgresForTest.launch()
        defer { postgres.stop() }
        let settings = postgres.settings(table: "cancelled")
        let sink = try PgvectorSink(settings: settings)
        let observer = Observer(url: settings.url)
        defer { observer.executor.shutdown() }

        // A statement that would run for two minutes: if it is not stopped, the task returns its row.
        let search = Task {
            try await sink.withCancellableConnection("slow search") { connection in
                try connection.query("SELECT pg_sleep(120)")
            }
        }
        try await observer.waitUntil(sleeping: 1)
        search.cancel()
        await #expect(throws: CancellationError.self) { _ = try await search.value }
        try await observer.waitUntil(sleeping: 0)

        // The connection went back to the pool out of any transaction and serves the next statement.
        let rows = try await sink.withCancellableConnection("next") { connection in
            try connection.query("SELECT 1")
        }
        #expect(rows == [["1"]])
    }

    /// A second connection that watches `pg_stat_activity`, on a thread of its own (libpq blocks).
    private struct Observer {
        let executor = BlockingExecutor(label: "pg-observer", threads: 1)
        let url: String

        /// Waits (polling, up to a minute) until `count` statements are sleeping in `pg_sleep(120)`.
        func waitUntil(sleeping count: Int) async throws {
            let url = url
            let found = try await executor.run {
                let connection = try PGConnection(url: url, password: "pw")
                for _ in 0..<1200 {
                    let rows = try connection.query(
                        "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query = 'SELECT pg_sleep(120)'"
                    )
                    if rows.first?.first == .some(String(count)) { return true }
                    Thread.sleep(forTimeInterval: 0.05)
                }
                return false
            }
            #expect(found, "pg_sleep statements never became \(count)")
        }
    }
}
