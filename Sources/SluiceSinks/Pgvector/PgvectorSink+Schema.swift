import Foundation
import SluiceCore
import Synchronization

/// Creating and checking the table (`prepare`), and what `sink info`/`drop` need.
extension PgvectorSink {
    /// The HNSW index's limit: over this many dimensions the column is `halfvec`.
    static let vectorDimensionLimit = 2000

    public func prepare(embedder: EmbedderIdentity) async throws {
        let table = quotedTable
        let name = tableName
        let rawTable = settings.table
        let textSearchIndex = textSearchIndexName
        let metric = settings.metric
        let dimensions = embedder.dimensions
        let readers = settings.accessField
        let type = dimensions > Self.vectorDimensionLimit ? "halfvec" : "vector"
        // A SQL string literal: single quotes doubled.
        let comment = "sluice embedder=\(embedder.description) metric=\(metric)".replacingOccurrences(
            of: "'",
            with: "''"
        )
        let state = try await withConnection("prepare \(rawTable)") {
            connection -> (empty: Bool, type: String, fallback: (folding: String?, rows: String?)) in
            try Self.serializingPreparation(connection) {
                try connection.query("CREATE EXTENSION IF NOT EXISTS vector")
                if let existing = try Self.describe(connection, table) {
                    let count = try Int(connection.query("SELECT count(*) FROM \(table)")[0][0] ?? "0") ?? 0
                    let storedEmbedder = existing.comment.flatMap { Self.field("embedder", in: $0) }
                    let storedMetric = existing.comment.flatMap { Self.field("metric", in: $0) }
                    if count > 0 {
                        if existing.dimensions != dimensions {
                            throw SluiceError(
                                .embedderMismatch,
                                "table \(rawTable) holds \(existing.dimensions)-dimensional vectors, the embedder makes \(dimensions); re-embed with --reembed or use another sink.table"
                            )
                        }
                        if let storedEmbedder, storedEmbedder != embedder.description {
                            throw SluiceError(
                                .embedderMismatch,
                                "table \(rawTable) holds vectors of \(storedEmbedder), not \(embedder); re-embed with --reembed or use another sink.table"
                            )
                        }
                        if let storedMetric, storedMetric != metric {
                            throw SluiceError(
                                .configuration,
                                "table \(rawTable) is indexed for metric \(storedMetric), sink.metric is \(metric)"
                            )
                        }
                    } else if existing.dimensions != dimensions || existing.type != type {
                        try connection.query("DROP TABLE \(table)")
                    }
                    if try Self.describe(connection, table) != nil {
                        let fallback = try Self.ensureTextSearch(
                            connection,
                            table: name,
                            indexName: textSearchIndex,
                            readers: readers
                        )
                        try connection.query("COMMENT ON TABLE \(table) IS '\(comment)'")
                        return (count == 0, type, fallback)
                    }
                }
                try connection.query(
                    """
                    CREATE TABLE IF NOT EXISTS \(table) (
                        id text PRIMARY KEY,
                        document_key text NOT NULL,
                        ordinal integer NOT NULL,
                        text text NOT NULL,
                        metadata jsonb NOT NULL DEFAULT '{}',
                        embedding \(type)(\(dimensions)) NOT NULL)
                    """
                )
                try PgvectorIndexName(table: name, suffix: "_document_key").create(
                    connection,
                    table: name,
                    "(document_key)"
                )
                let fallback = try Self.ensureTextSearch(
                    connection,
                    table: name,
                    indexName: textSearchIndex,
                    readers: readers
                )
                try connection.query("COMMENT ON TABLE \(table) IS '\(comment)'")
                return (true, type, fallback)
            }
        }
        runState.withLock {
            $0.columnType = state.type
            $0.dimensions = dimensions
            $0.bulk = state.empty
            $0.textSearchFallback = state.fallback.folding
            $0.keywordRowsFallback = state.fallback.rows
        }
        // A table that already holds rows keeps its index maintained row by row; an empty one gets it
        // after the bulk load (finish).
        if !state.empty { try await ensureIndex() }
    }

    /// The key of the transaction-level advisory lock under which every Sluice process prepares its table
    /// ("sluice" in ASCII): one lock for every table, as `CREATE EXTENSION` races too, and preparing is short.
    static let preparationLock: Int64 = 0x736C_7569_6365

    /// Runs `body` in a transaction holding ``preparationLock``. Shards starting together on a fresh database
    /// all prepare the same table at once, and PostgreSQL's `IF NOT EXISTS` is not atomic against a
    /// concurrent creator (23505 on `pg_type_typname_nsp_index` or `pg_extension_name_index`, or 42P07):
    /// serialized, the first creates and the others find what it committed. The lock ends with the
    /// transaction, whatever happens to the connection.
    static func serializingPreparation<T>(_ connection: PGConnection, _ body: () throws -> T) throws -> T {
        try committing(connection) {
            try connection.query("SELECT pg_advisory_xact_lock(\(preparationLock))")
            return try body()
        }
    }

    /// Builds the HNSW index if it does not exist (at the end of a run, or at once for a non-empty table).
    func ensureIndex() async throws {
        let indexName = self.indexName
        let name = tableName
        let opclass = operatorClass
        try await withConnection("create index on \(settings.table)") { connection in
            // Looked up first: `CREATE INDEX IF NOT EXISTS` needs CREATE on the schema even when the index is
            // there, which a role that owns the table but may not create in its schema lacks.
            if try indexName.exists(connection, table: name) { return }
            // The default maintenance_work_mem (64 MB) makes HNSW builds over ~30k vectors many times
            // slower; this session only.
            try connection.query("SET maintenance_work_mem = '512MB'")
            do {
                try indexName.create(connection, table: name, "USING hnsw (embedding \(opclass))")
            } catch {
                // Sharded runs finishing at once: another one just created it (23505 on pg_class, or 42P07).
                guard ["23505", "42P07"].contains(PGConnection.sqlState(of: error) ?? "") else { throw error }
            }
            try connection.query("RESET maintenance_work_mem")
        }
    }

    public func finish() async throws {
        let exists = try await withConnection("describe \(settings.table)") { [table = quotedTable] in
            try Self.describe($0, table) != nil
        }
        if exists {
            try await ensureIndex()
            // Fresh planner statistics once the run's writes are in: without them, autovacuum's ANALYZE lands
            // at some later moment and can flip the plan of a search between the HNSW index (approximate)
            // and a scan (exact), so the same query over the same rows could answer near ties differently.
            try await withConnection("analyze \(settings.table)") {
                [
                    table = quotedTable, name = tableName, textSearchIndex = textSearchIndexName,
                    readers = settings.accessField
                ]
                connection in
                _ = try connection.query("ANALYZE \(table)")
                try Self.recordAverageLength(
                    connection,
                    table: name,
                    indexName: textSearchIndex.name,
                    readers: readers
                )
            }
        }
        runState.withLock { $0.bulk = false }
    }

    public func info() async throws -> SinkInfo {
        let rawTable = settings.table
        let table = quotedTable
        let indexName = self.indexName
        let name = self.name
        return try await withConnection("info \(rawTable)") { connection in
            guard let existing = try Self.describe(connection, table) else {
                return SinkInfo(name: name, exists: false, count: 0)
            }
            let count = try Int(connection.query("SELECT count(*) FROM \(table)")[0][0] ?? "0") ?? 0
            // An older version's name until the next run renames it (``PgvectorIndexName``).
            let index =
                try connection.query(
                    "SELECT indexdef FROM pg_indexes WHERE indexname = $1 OR indexname = $2 ORDER BY indexname = $1 DESC",
                    [indexName.name, indexName.legacy ?? indexName.name]
                ).first?[0] ?? nil
            let metric =
                index.map { definition -> String in
                    if definition.contains("_cosine_ops") { return "cosine" }
                    if definition.contains("_l2_ops") { return "l2" }
                    if definition.contains("_ip_ops") { return "dot" }
                    return "unknown"
                } ?? existing.comment.flatMap { Self.field("metric", in: $0) }
            var details = ["column": "\(existing.type)(\(existing.dimensions))"]
            details["hnsw index"] = index == nil ? "not built yet (built at the end of the next run)" : indexName.name
            let fallback = try Self.textSearchFallback(connection, table: table)
            let rowsFallback = try Self.keywordRowsFallback(connection, table: table)
            if let configuration = try Self.columnConfiguration(connection, table: table) {
                details["keyword search"] =
                    fallback == nil ? "accents folded (\(configuration))" : "accents not folded (english)"
                details["keyword rows"] =
                    rowsFallback == nil ? "table rows and JSON records scored on their own" : "scored whole"
            }
            return SinkInfo(
                name: name,
                count: count,
                dimensions: existing.dimensions,
                metric: metric,
                embedder: existing.comment.flatMap { Self.field("embedder", in: $0) },
                details: details,
                warnings: [fallback, rowsFallback].compactMap { $0 }
            )
        }
    }

    /// Drops the table and what the sink made for it: the sums behind the keyword average
    /// (`dropKeywordLengths(_:table:)`), and, when no column of another table uses them any more, the units
    /// function (`keywordUnitsFunction(table:)`) and the folding configuration
    /// (`foldingConfiguration(table:)`) of its schema. Extensions (`vector`, `unaccent`) stay: nothing records
    /// whether the sink created them or what else calls them.
    public func drop() async throws {
        let table = quotedTable
        let name = tableName
        try await withConnection("drop \(settings.table)") { connection in
            // Under the preparation lock: a table being prepared at the same moment has its column (and so its
            // dependency on the function) committed before, or finds the function missing and makes it again.
            try Self.serializingPreparation(connection) {
                try connection.query("DROP TABLE IF EXISTS \(table)")
                try Self.dropKeywordLengths(connection, table: name)
                try Self.dropUnlessUsed(connection, "FUNCTION", Self.keywordUnitsSignature(table: name))
                try Self.dropUnlessUsed(connection, "TEXT SEARCH CONFIGURATION", Self.foldingConfiguration(table: name))
            }
        }
    }

    /// Drops the object of `kind` (`FUNCTION`, `TEXT SEARCH CONFIGURATION`) called `name` if it exists and
    /// nothing depends on it; one that a column of another table still uses (2BP01), or that another role owns
    /// (42501), stays.
    static func dropUnlessUsed(_ connection: PGConnection, _ kind: String, _ name: String) throws {
        try connection.query("SAVEPOINT sluice_drop")
        do {
            try connection.query("DROP \(kind) IF EXISTS \(name)")
        } catch {
            guard ["2BP01", "42501"].contains(PGConnection.sqlState(of: error) ?? "") else { throw error }
            try connection.query("ROLLBACK TO SAVEPOINT sluice_drop")
        }
        try connection.query("RELEASE SAVEPOINT sluice_drop")
    }

    public func removeAll() async throws {
        let table = quotedTable
        let rawTable = settings.table
        try await withConnection("truncate \(rawTable)") { connection in
            if try Self.describe(connection, table) != nil { try connection.query("TRUNCATE \(table)") }
        }
    }

    struct Description: Equatable {
        var type: String
        var dimensions: Int
        var comment: String?
    }

    /// The embedding column's type and dimension and the table comment, or nil if there is no table.
    /// - Parameter quotedTable: the name as every statement writes it (``quotedTable``): `to_regclass`
    ///   folds an unquoted name to lower case, and would then miss the table the quoted `CREATE TABLE`
    ///   made for an upper-case `sink.table`.
    static func describe(_ connection: PGConnection, _ quotedTable: String) throws -> Description? {
        let rows = try connection.query(
            """
            SELECT format_type(a.atttypid, a.atttypmod), obj_description(c.oid, 'pg_class')
            FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
            WHERE c.oid = to_regclass($1) AND a.attname = 'embedding'
            """,
            [quotedTable]
        )
        guard let row = rows.first, let type = row[0] else { return nil }
        // "vector(384)" / "halfvec(3072)"
        let name = String(type.prefix { $0 != "(" })
        let dimensions = Int(type.drop { $0 != "(" }.dropFirst().prefix { $0 != ")" }) ?? 0
        return Description(type: name, dimensions: dimensions, comment: row[1])
    }

    /// Whether the table `quotedTable` has an index named `name` (indexes live in their table's schema).
    static func hasIndex(_ connection: PGConnection, table quotedTable: String, named name: String) throws -> Bool {
        try connection.query(
            """
            SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
            WHERE i.indrelid = to_regclass($1) AND c.relname = $2
            """,
            [quotedTable, name]
        ).first?[0] != "0"
    }

    /// `value` of `name=value` in a space-separated comment.
    static func field(_ name: String, in comment: String) -> String? {
        comment.split(separator: " ").first { $0.hasPrefix("\(name)=") }.map { String($0.dropFirst(name.count + 1)) }
    }
}
