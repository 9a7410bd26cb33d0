import SluiceCore

/// Vector search with the filter in the SQL (``PgvectorFilter``), so PostgreSQL applies it while it ranks.
///
/// An HNSW index scan looks at `hnsw.ef_search` candidates (40 by default) and a `WHERE` then keeps only
/// the matching ones: a selective filter would return fewer than k. pgvector 0.8's iterative scan
/// (`hnsw.iterative_scan = strict_order`, results in exact distance order) keeps scanning until k rows
/// match or `hnsw.max_scan_tuples` were visited; if the answer still has fewer than k rows (the
/// matches are rarer than that, or an older pgvector), the query runs again over the matching rows
/// gathered first (a materialized CTE, which the index cannot order): an exact ranking, so a filter
/// never returns fewer than k when k rows match.
extension PgvectorSink {
    /// The largest `hnsw.ef_search` pgvector accepts.
    static let maxEfSearch = 1000

    /// PostgreSQL's `text` cannot hold U+0000: a filter holding one is refused (``PgvectorFilter``).
    static let limits: FilterLimits = {
        var limits = FilterLimits.standard
        limits.holdsNUL = false
        return limits
    }()

    public var filterLimits: FilterLimits { Self.limits }

    public func search(_ request: SearchRequest) async throws -> [SearchHit] {
        if request.mode == .keyword {
            return try await keywordSearch(request.text, k: request.k, filter: request.filter)  // +Keyword.swift
        }
        try request.requireVectorMode(name)
        let table = quotedTable
        let op = distanceOperator
        let metric = settings.metric
        let query = PgvectorCopy.vectorLiteral(request.vector)
        let k = max(0, request.k)
        let filter = try request.filter.map { try PgvectorFilter($0, firstParameter: 2) }
        return try await withCancellableConnection("search \(settings.table)") { connection in
            guard let description = try Self.describe(connection, table) else { return [] }
            let sql = Self.searchSQL(table: table, op: op, type: description.type, k: k, filter: filter)
            let parameters = [query] + (filter?.parameters ?? [])
            var rows = try Self.inTransaction(connection) {
                try connection.query("SET LOCAL hnsw.ef_search = \(min(Self.maxEfSearch, max(40, k)))")
                if filter != nil {
                    // pgvector before 0.8 has no iterative scan: carry on without it (the exact scan below).
                    try connection.query("SAVEPOINT iterative")
                    do {
                        try connection.query("SET LOCAL hnsw.iterative_scan = strict_order")
                    } catch {
                        try connection.query("ROLLBACK TO SAVEPOINT iterative")
                    }
                }
                return try connection.query(sql, parameters)
            }
            if let filter, rows.count < k {
                // Ordering a materialized set of the matching rows cannot use the HNSW index: exact.
                let exact = """
                    WITH matching AS MATERIALIZED (SELECT * FROM \(table) WHERE \(filter.sql))
                    SELECT \(Self.columns), embedding \(op) $1::\(description.type) AS distance FROM matching
                    ORDER BY embedding \(op) $1::\(description.type) LIMIT \(k)
                    """
                rows = try connection.query(exact, parameters)
            }
            return try rows.map { row in
                let distance = Float(row[6] ?? "") ?? .nan
                // Higher is better: cosine similarity, negative L2 distance, inner product.
                let score: Float = metric == "cosine" ? 1 - distance : -distance
                return SearchHit(score: score, record: try Self.record(row))
            }
        }
    }

    /// The search statement: `$1` is the query vector, the filter's parameters follow.
    static func searchSQL(table: String, op: String, type: String, k: Int, filter: PgvectorFilter?) -> String {
        """
        SELECT \(columns), embedding \(op) $1::\(type) AS distance FROM \(table)
        WHERE \(filter?.sql ?? "TRUE") ORDER BY embedding \(op) $1::\(type) LIMIT \(k)
        """
    }

    /// Runs `body` in a transaction (for `SET LOCAL`), rolled back: searches change nothing.
    static func inTransaction<T>(_ connection: PGConnection, _ body: () throws -> T) throws -> T {
        try connection.query("BEGIN")
        do {
            let result = try body()
            try connection.query("ROLLBACK")
            return result
        } catch {
            _ = try? connection.query("ROLLBACK")
            throw error
        }
    }
}
