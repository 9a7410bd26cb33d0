import Foundation
import SluiceTesting

@testable import SluiceSinks

/// A real PostgreSQL with pgvector on loopback for one test (Sources/SluiceTesting/StandIns/pgvector_server.py),
/// its data in a folder of its own: `stop()` stops the server and removes the folder.
struct PostgresForTest {
    let folder: URL
    let server: StandInServer

    static func launch() async throws -> PostgresForTest {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sluice-pg-\(UInt32.random(in: 0...UInt32.max))"
        )
        do {
            let server = try await StandInServer.launch(script: "pgvector_server.py", arguments: [folder.path, "pw"])
            return PostgresForTest(folder: folder, server: server)
        } catch {
            TemporaryDirectory.remove(folder)
            throw error
        }
    }

    /// The server's address, as a pipeline's `sink.url` names it.
    var url: String { "postgresql://postgres@127.0.0.1:\(server.port)/postgres" }

    /// Settings for a sink on `table`, with one connection (the tests count statements and backends).
    func settings(table: String) -> PgvectorSink.Settings {
        var settings = PgvectorSink.Settings(url: url, password: "pw", table: table)
        settings.connections = 1
        return settings
    }

    func stop() {
        server.stop()
        TemporaryDirectory.remove(folder)
    }
}
