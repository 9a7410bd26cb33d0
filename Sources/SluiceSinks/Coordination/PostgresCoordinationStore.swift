import Foundation
import SluiceCore

/// The records of a sharded deployment's index generations (``SharedGenerationRecords``) in a PostgreSQL
/// database of the user's choosing, for a vector store that cannot keep them itself (Pinecone:
/// `generations.coordination`, docs/GENERATIONS.md, "Sharded deployments on Pinecone").
///
/// One table, `sluice_generation_records` (`deployment`, `key`, `version`, `value`, `writer`, primary key
/// `(deployment, key, version)`), holds a row per version of a record (``InsertOnceRecordStore``): a
/// write expecting version `v` inserts `(deployment, key, v+1)` with `ON CONFLICT DO NOTHING` and reads
/// its writer token back. The primary key's unique index lets exactly one of two racing inserts commit
/// the row; an insert is one statement, committed or not, so a writer killed at any point leaves either
/// its version or nothing, never a claim without a manifest. Several deployments may share the table:
/// each is named by ``deployment`` (the Pinecone index and namespace).
///
/// There is no deployment lock (``deploymentLock(shared:)`` is nil), as on Chroma and Qdrant, so that the
/// coordination store could be any store with an insert-once write (an S3 `PUT` with `If-None-Match: *`).
package final class PostgresCoordinationStore: InsertOnceRecordStore {
    /// The table every deployment's records are in.
    static let table = "sluice_generation_records"

    let url: String
    let password: String?
    /// The deployment the records are of (a table may hold several).
    package let deployment: String
    let maxRetries: Int
    private let pool: PGConnectionPool
    private let executor: BlockingExecutor

    /// - Parameters:
    ///   - url: a libpq connection string or URI (it may carry a password only when it came from an
    ///     environment variable).
    ///   - password: the password, from the variable `generations.password_env` names.
    ///   - deployment: the name of the deployment's records in the table.
    package init(url: String, password: String?, deployment: String, maxRetries: Int) {
        self.url = url
        self.password = password
        self.deployment = deployment
        self.maxRetries = maxRetries
        pool = PGConnectionPool(url: url, password: password)
        executor = BlockingExecutor(label: "sl-coordination", threads: 1)
    }

    deinit { executor.shutdown() }

    /// Where the records are, without any secret: `postgres host=… dbname=… (deployment …)`.
    package var location: String {
        "postgres \(PgvectorSink.redacted(url)) table \(Self.table) deployment \(deployment)"
    }

    package var seenVersions: SeenRecordVersions { .of(location) }

    /// Runs `body` with a connection on the store's thread, retrying transient failures (a server that
    /// cannot be reached).
    private func withConnection<T: Sendable>(
        _ what: String,
        _ body: @escaping @Sendable (PGConnection) throws -> T
    ) async throws -> T {
        try await withSinkRetries(policy: .store(maxRetries: maxRetries), what: "\(what) in the coordination store") {
            try await executor.run { [pool] in try pool.with(body) }
        }
    }

    /// Creates the table unless it exists. Two processes creating it at once would clash on PostgreSQL's
    /// catalog (`CREATE TABLE IF NOT EXISTS` is not atomic against a concurrent creator): serialized by a
    /// transaction-level advisory lock. Once it exists no `CREATE` is sent, so a role without the `CREATE`
    /// privilege on the schema can write (`CREATE … IF NOT EXISTS` checks the privilege before the name).
    private static func ensureTable(_ connection: PGConnection) throws {
        if try tableExists(connection) { return }
        try PgvectorSink.committing(connection) {
            try connection.query("SELECT pg_advisory_xact_lock(\(tableCreationLock))")
            try connection.query(
                """
                CREATE TABLE IF NOT EXISTS \(table) (deployment text NOT NULL, key text NOT NULL, \
                version bigint NOT NULL, value text NOT NULL, writer text NOT NULL, \
                PRIMARY KEY (deployment, key, version))
                """
            )
        }
    }

    /// The advisory lock key that serializes the table's creation (a fixed number: "sluicegr").
    static let tableCreationLock: Int64 = 0x736C_7569_6365_6772

    private static func tableExists(_ connection: PGConnection) throws -> Bool {
        try connection.query("SELECT to_regclass($1) IS NOT NULL", [table]).first?[0] == "t"
    }

    private static func records(_ rows: PGConnection.Rows) -> [VersionedGenerationRecord] {
        rows.compactMap { row in
            guard row.count == 4, let key = row[0], let version = row[1].flatMap({ Int($0) }), let value = row[2],
                let writer = row[3]
            else { return nil }
            return VersionedGenerationRecord(key: key, version: version, value: value, writer: writer)
        }
    }

    private static let columns = "key, version::text, value, writer"

    package func insertIfAbsent(_ record: VersionedGenerationRecord) async throws {
        for text in [record.key, record.value, record.writer] where text.contains("\u{0}") {
            throw SluiceError(.sinkFailed, "a generation record holds a NUL character, which PostgreSQL text cannot")
        }
        let deployment = self.deployment
        try await withConnection("write \(record.id)") { connection in
            try Self.ensureTable(connection)
            try connection.query(
                """
                INSERT INTO \(Self.table) (deployment, key, version, value, writer) VALUES ($1, $2, $3, $4, $5) \
                ON CONFLICT (deployment, key, version) DO NOTHING
                """,
                [deployment, record.key, String(record.version), record.value, record.writer]
            )
        }
    }

    package func versionedRecord(id: String) async throws -> VersionedGenerationRecord? {
        guard let at = id.lastIndex(of: "@"), let version = Int(id[id.index(after: at)...]) else { return nil }
        let key = String(id[..<at])
        let deployment = self.deployment
        return try await withConnection("read \(id)") { connection in
            guard try Self.tableExists(connection) else { return nil }
            return Self.records(
                try connection.query(
                    "SELECT \(Self.columns) FROM \(Self.table) WHERE deployment = $1 AND key = $2 AND version = $3",
                    [deployment, key, String(version)]
                )
            )
            .first
        }
    }

    package func allVersionedRecords() async throws -> [VersionedGenerationRecord] {
        let deployment = self.deployment
        return try await withConnection("read the records") { connection in
            guard try Self.tableExists(connection) else { return [] }
            return Self.records(
                try connection.query("SELECT \(Self.columns) FROM \(Self.table) WHERE deployment = $1", [deployment])
            )
        }
    }

    package func versionedRecords(of key: String, from version: Int) async throws -> [VersionedGenerationRecord] {
        let deployment = self.deployment
        return try await withConnection("read \(key)") { connection in
            guard try Self.tableExists(connection) else { return [] }
            return Self.records(
                try connection.query(
                    "SELECT \(Self.columns) FROM \(Self.table) WHERE deployment = $1 AND key = $2 AND version >= $3",
                    [deployment, key, String(version)]
                )
            )
        }
    }

    package func deleteVersionedRecords(ids: [String]) async throws {
        guard !ids.isEmpty else { return }
        let deployment = self.deployment
        try await withConnection("delete records") { connection in
            guard try Self.tableExists(connection) else { return }
            try connection.query(
                "DELETE FROM \(Self.table) WHERE deployment = $1 AND (key || '@' || version::text) = ANY($2::text[])",
                [deployment, Self.textArray(ids)]
            )
        }
    }

    /// `ids` as a PostgreSQL text array literal (`{"a@1","b@2"}`), each element quoted and escaped.
    static func textArray(_ ids: [String]) -> String {
        "{"
            + ids.map {
                "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                    + "\""
            }
            .joined(separator: ",") + "}"
    }

    /// What `sluice check` says of the store: reached, and the version of the deployment's manifest.
    /// - Returns: the highest version of `manifest` (nil: none yet, or no table yet).
    package func checkReachable() async throws -> Int? {
        let deployment = self.deployment
        return try await withConnection("check") { connection in
            guard try Self.tableExists(connection) else { return nil }
            return try connection.query(
                "SELECT max(version)::text FROM \(Self.table) WHERE deployment = $1 AND key = 'manifest'",
                [deployment]
            )
            .first?[0]
            .flatMap { Int($0) }
        }
    }
}
