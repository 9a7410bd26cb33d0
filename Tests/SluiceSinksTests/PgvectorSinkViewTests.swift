import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// The view outside readers query while index generations switch (``PgvectorSink/publishView(_:label:)``),
/// against a real PostgreSQL 18 + pgvector: replaced in one transaction, even to a table of other
/// dimensions; a reader inside a transaction across the switch keeps the old table whole, the next one
/// sees the new; a table of that name is never dropped.
@Suite(.serialized)
struct PgvectorSinkViewTests {
    static func records(_ count: Int, key: String, dimensions: Int) -> [VectorRecord] {
        (0..<count).map { i in
            VectorRecord(
                id: VectorID(rawValue: String(format: "%032x", i + 1)),
                documentKey: key,
                ordinal: i,
                text: "\(key) \(i)",
                vector: (0..<dimensions).map { Float(($0 + i) % 5) + 1 }
            )
        }
    }

    static func filled(
        _ postgres: PostgresForTest,
        _ table: String,
        rows: Int,
        dimensions: Int
    ) async throws
        -> PgvectorSink
    {
        let sink = try PgvectorSink(settings: postgres.settings(table: table))
        try await sink.prepare(embedder: EmbedderIdentity(provider: "test", model: table, dimensions: dimensions))
        try await sink.upsert(records(rows, key: table, dimensions: dimensions))
        try await sink.finish()
        return sink
    }

    @Test(
        "the view switches tables in one transaction: a reader's open transaction keeps the old table whole, the next statement sees the new one"
    )
    func switchIsAtomicForReaders() async throws {
        let postgres = try await PostgresForTest.launch()
        defer { postgres.stop() }
        let old = try await Self.filled(postgres, "docs", rows: 3, dimensions: 4)
        let new = try await Self.filled(postgres, "docs_g1", rows: 2, dimensions: 8)
        #expect(try await new.publishView("docs_active", label: "g1") == true)  // made first on the other table
        #expect(try await old.publishView("docs_active", label: "g0") == true)
        #expect(try await old.viewLabel("docs_active") == "g0")

        let reader = try PGConnection(url: postgres.url, password: "pw")
        func read() throws -> [String] {
            try reader.query(
                "SELECT document_key, count(*)::text, max(vector_dims(embedding))::text FROM docs_active GROUP BY 1"
            ).map { $0.map { $0 ?? "" }.joined(separator: " ") }
        }
        try reader.query("BEGIN ISOLATION LEVEL REPEATABLE READ")
        #expect(try read() == ["docs 3 4"])

        let switching = Task { try await new.publishView("docs_active", label: "g1") }
        // The switch waits for the reader's lock on the view: seen in pg_locks, not guessed from a delay.
        let watcher = try PGConnection(url: postgres.url, password: "pw")
        let deadline = ContinuousClock.now + .seconds(120)
        while try watcher.query("SELECT count(*) FROM pg_locks WHERE NOT granted")[0][0] == "0" {
            try #require(ContinuousClock.now < deadline, "the switch never waited on the reader's lock")
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(try read() == ["docs 3 4"], "inside its transaction the reader keeps the old table, whole")
        try reader.query("COMMIT")
        #expect(try await switching.value == true)
        #expect(try read() == ["docs_g1 2 8"], "the next statement reads the new table (other dimensions)")
        #expect(try await new.viewLabel("docs_active") == "g1")
        #expect(try await old.count() == 3, "the old table is kept (for a rollback)")
    }

    @Test(
        "a relation of the view's name that is not a view is never dropped; a table not yet created publishes nothing"
    )
    func refusesToReplaceATable() async throws {
        let postgres = try await PostgresForTest.launch()
        defer { postgres.stop() }
        let sink = try await Self.filled(postgres, "notes", rows: 2, dimensions: 4)
        let taken = try await Self.filled(postgres, "notes_active", rows: 1, dimensions: 4)
        await #expect(throws: SluiceError.self) { try await sink.publishView("notes_active", label: "g0") }
        #expect(try await taken.count() == 1, "the table of that name is untouched")
        #expect(try await sink.viewLabel("notes_active") == nil)

        let missing = try PgvectorSink(settings: postgres.settings(table: "notes_g1"))
        #expect(try await missing.publishView("other_active", label: "g1") == false)
        #expect(try await missing.viewLabel("other_active") == nil)
    }
}
