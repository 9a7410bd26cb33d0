import Foundation
import SluiceCore
import Synchronization

/// The records of a sharded deployment's index generations (``SharedGenerationRecords``) in PostgreSQL: the
/// table `<table>_generations` beside the original generation's (`key text PRIMARY KEY, value text, version
/// bigint`; its name kept within 63 bytes, an older version's cut name renamed: ``PgvectorGenerationsTable``), every conditional write a `SELECT … FOR UPDATE` and an `UPDATE` (or `INSERT`) in one
/// transaction, and the deployment's lock a session-level advisory lock (`pg_try_advisory_lock_shared` for
/// a shard's run, `pg_try_advisory_lock` for a change) held on a connection of its own: PostgreSQL releases
/// it when that connection ends, a process killed with it held included.
extension PgvectorSink: SharedGenerationRecords {
    /// `<table>_generations` (`schema.<table>_generations`), within 63 bytes.
    var sharedGenerationsTable: PgvectorGenerationsTable { PgvectorGenerationsTable(table: tableName) }

    /// The advisory lock's key: a hash of the table's name (one deployment per original table; the name as
    /// every version hashed it, so that an older and a newer process still exclude each other).
    var deploymentLockKey: Int64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in (settings.table + "_generations").utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0100_0000_01B3
        }
        return Int64(bitPattern: hash)
    }

    /// Creates the table if it does not exist, or renames an older version's (serialized with every other
    /// preparation), and returns its quoted name.
    private func ensureSharedGenerationsTable(_ connection: PGConnection) throws -> String {
        let table = sharedGenerationsTable
        try Self.serializingPreparation(connection) { try table.ensure(connection) }
        return table.name.quoted
    }

    package func sharedRecord(_ key: String) async throws -> SharedGenerationRecord? {
        let generations = sharedGenerationsTable
        return try await withConnection("read \(key) of \(settings.table)_generations") { connection in
            guard let table = try generations.existing(connection) else { return nil }
            let rows = try connection.query("SELECT value, version::text FROM \(table) WHERE key = $1", [key])
            guard let row = rows.first, let value = row[0], let version = row[1].flatMap({ Int($0) }) else {
                return nil
            }
            return SharedGenerationRecord(value: Data(value.utf8), version: version)
        }
    }

    package func writeSharedRecord(_ key: String, _ value: Data, expecting version: Int?) async throws -> Bool {
        let text = String(decoding: value, as: UTF8.self)
        return try await withConnection("write \(key) of \(settings.table)_generations") { [self] connection in
            let table = try ensureSharedGenerationsTable(connection)
            return try Self.committing(connection) {
                let current = try connection.query(
                    "SELECT version::text FROM \(table) WHERE key = $1 FOR UPDATE",
                    [key]
                )
                .first?[0].flatMap { Int($0) }
                if let version, version != (current ?? 0) { return false }
                if let current {
                    try connection.query(
                        "UPDATE \(table) SET value = $2, version = $3 WHERE key = $1",
                        [key, text, String(current + 1)]
                    )
                } else {
                    // Two first writers: the second's INSERT waits for the first's row, then inserts nothing (a
                    // plain INSERT failed there with 23505). A conditional write has lost; an unconditional one
                    // writes over the row it now finds.
                    let inserted = try connection.query(
                        "INSERT INTO \(table) (key, value, version) VALUES ($1, $2, 1) ON CONFLICT (key) DO NOTHING RETURNING version",
                        [key, text]
                    )
                    if inserted.isEmpty {
                        guard version == nil else { return false }
                        try connection.query(
                            "UPDATE \(table) SET value = $2, version = version + 1 WHERE key = $1",
                            [key, text]
                        )
                    }
                }
                return true
            }
        }
    }

    package func sharedRecords(prefix: String) async throws -> [String: Data] {
        let generations = sharedGenerationsTable
        return try await withConnection("read \(settings.table)_generations") { connection in
            guard let table = try generations.existing(connection) else { return [:] }
            let rows = try connection.query(
                "SELECT key, value FROM \(table) WHERE starts_with(key, $1)",
                [prefix]
            )
            var result: [String: Data] = [:]
            for row in rows {
                if let key = row[0], let value = row[1] { result[key] = Data(value.utf8) }
            }
            return result
        }
    }

    package func deleteSharedRecords(prefix: String) async throws {
        let generations = sharedGenerationsTable
        try await withConnection("delete from \(settings.table)_generations") { connection in
            guard let table = try generations.existing(connection) else { return }
            try connection.query("DELETE FROM \(table) WHERE starts_with(key, $1)", [prefix])
        }
    }

    package func deploymentLock(shared: Bool) async throws -> (any DeploymentLockHold)? {
        let key = deploymentLockKey
        let url = settings.url
        let password = settings.password
        let function = shared ? "pg_try_advisory_lock_shared" : "pg_try_advisory_lock"
        let connection = try await withSinkRetries(
            policy: .store(maxRetries: settings.maxRetries),
            what: "lock \(settings.table)'s generations"
        ) {
            try await executor.run {
                let connection = try PGConnection(url: url, password: password)
                return PGLockConnection(
                    connection: connection,
                    taken: try connection.query("SELECT \(function)(\(key))").first?[0] == "t"
                )
            }
        }
        guard connection.taken else {
            throw SluiceError(
                .lockHeld,
                shared
                    ? "a change of the deployment's index generations is being made (`sluice generation …` with another shard's state): try again when it ends"
                    : "a shard of the deployment is running (or another change is being made): try again when it ends"
            )
        }
        return PgvectorDeploymentLock(connection)
    }
}

/// A connection that tried to take an advisory lock, and whether it did.
/// `@unchecked Sendable`: handed from the thread that opened it to the lock's holder, then never used again
/// but to be closed.
final class PGLockConnection: @unchecked Sendable {
    let connection: PGConnection
    let taken: Bool

    init(connection: PGConnection, taken: Bool) {
        self.connection = connection
        self.taken = taken
    }
}

/// A session-level advisory lock: released when its connection is closed (``release()``, or deinit).
final class PgvectorDeploymentLock: DeploymentLockHold {
    private let connection: Mutex<PGLockConnection?>

    init(_ connection: PGLockConnection) {
        self.connection = Mutex(connection)
    }

    func release() async {
        // Closing the connection ends the session, and with it the lock.
        _ = connection.withLock { $0.take() }
    }
}
