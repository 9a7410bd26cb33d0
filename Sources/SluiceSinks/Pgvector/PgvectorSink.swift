import Foundation
import SluiceCore
import Synchronization

/// PostgreSQL with pgvector, through libpq.
///
/// One table: `id text primary key, document_key text, ordinal integer, text text, metadata jsonb,
/// embedding vector(n)` (`halfvec(n)` over 2,000 dimensions, the HNSW limit), created on first use with
/// an index on `document_key`. Writes go through `COPY` into a per-connection temporary staging table,
/// then `INSERT … ON CONFLICT (id) DO UPDATE` in the same transaction, so a batch is idempotent and
/// atomic. When the table was empty at the start of a run, batches are copied straight into it (the
/// bulk path; a batch that meets an existing id falls back to the staging path), and the HNSW index
/// (`vector_cosine_ops` by default) is built once at the end of the run rather than maintained row by
/// row. The embedder identity and metric are kept in the table's comment and checked at start-up.
///
/// libpq calls block: every one runs on the sink's own threads.
public final class PgvectorSink: VectorSink {
    /// What the pgvector store reads of `sink.*` (``SinkFactory`` maps the pipeline file's keys to it).
    public struct Settings: Sendable {
        public var url: String
        public var password: String?
        /// `table` or `schema.table`, each part a plain SQL identifier or a double-quoted one (`"my.table"`,
        /// `PgvectorTableName`). Every statement quotes the name, so it is case-sensitive: `Mixed_Case` is
        /// the table `"Mixed_Case"`, not `mixed_case`.
        public var table: String
        /// `cosine`, `l2` or `dot`.
        public var metric: String
        /// Connections (and threads), one per concurrent writer.
        public var connections: Int
        /// Retries after the first attempt of a write (`sink.max_retries`).
        public var maxRetries: Int
        public var maxBatchBytes: Int
        /// `access.field` when access control is on: the keyword sums are kept by its values, so that a search
        /// restricted by it counts its corpus over what its caller may read (`PgvectorSink+KeywordLengths.swift`).
        public var accessField: String?

        /// The table `table` at `url`, everything else at the pipeline file's defaults.
        public init(url: String, password: String?, table: String) {
            var section = PipelineConfiguration.Sink()
            section.table = table
            self.init(
                section: section,
                url: url,
                password: password,
                connections: PipelineConfiguration.Run().upsertParallelism
            )
        }

        /// What a pipeline file's `sink` section says of a pgvector table (`table`, `metric`, `max_retries`,
        /// `max_batch_bytes`).
        /// - Parameters:
        ///   - url: `sink.url`, which pgvector requires.
        ///   - password: the value of the variable `sink.password_env` names.
        ///   - connections: `run.upsert_parallelism`.
        public init(section sink: PipelineConfiguration.Sink, url: String, password: String?, connections: Int) {
            self.url = url
            self.password = password
            table = sink.table
            metric = sink.metric.rawValue
            self.connections = connections
            maxRetries = sink.maxRetries
            maxBatchBytes = sink.maxBatchBytes
        }
    }

    let settings: Settings
    let pool: PGConnectionPool
    let executor: BlockingExecutor
    /// Set by `prepare`: the column type (`vector` or `halfvec`) and whether the bulk path is allowed.
    let runState = Mutex(RunState())
    /// `settings.table`, read (``PgvectorTableName``).
    let tableName: PgvectorTableName
    let quotedTable: String
    /// The HNSW index's name (``PgvectorIndexName``: within 63 bytes).
    let indexName: PgvectorIndexName

    struct RunState {
        var columnType = "vector"
        var dimensions = 0
        var bulk = false
        /// Why the last prepare could not fold accents in keyword search (``preparationNotice``).
        var textSearchFallback: String?
        /// Why the last prepare could not add the rows' and records' units column (``preparationNotice``).
        var keywordRowsFallback: String?
    }

    public var name: String { "pgvector:\(Self.redacted(settings.url))#\(settings.table)" }

    public init(settings: Settings) throws {
        guard let tableName = PgvectorTableName(parsing: settings.table) else {
            throw SluiceError(
                .configuration,
                "sink.table: '\(settings.table)' must be a SQL identifier (letters, digits, _, or any text in double quotes; optionally schema.table)"
            )
        }
        try Self.refusePassword(in: settings.url)
        self.settings = settings
        pool = PGConnectionPool(url: settings.url, password: settings.password)
        executor = BlockingExecutor(label: "sl-pgvector", threads: max(1, settings.connections))
        self.tableName = tableName
        quotedTable = tableName.quoted
        indexName = PgvectorIndexName(table: tableName, suffix: "_embedding_hnsw")
    }

    deinit { executor.shutdown() }

    /// Runs a job with a connection on the sink's threads, retrying transient failures.
    @discardableResult
    func withConnection<T: Sendable>(
        _ what: String,
        _ body: @escaping @Sendable (PGConnection) throws -> T
    ) async throws -> T {
        try await withSinkRetries(policy: .store(maxRetries: settings.maxRetries), what: what) {
            try await executor.run { [pool] in try pool.with(body) }
        }
    }

    /// As ``withConnection(_:_:)``, for read-only statements that a cancelled caller stops on the server
    /// (``PGQueryCanceller``): the searches, which a request's deadline cancels.
    func withCancellableConnection<T: Sendable>(
        _ what: String,
        _ body: @escaping @Sendable (PGConnection) throws -> T
    ) async throws -> T {
        try await withSinkRetries(policy: .store(maxRetries: settings.maxRetries), what: what) {
            let canceller = PGQueryCanceller()
            return try await withTaskCancellationHandler {
                try await executor.run { [pool] in
                    try pool.with { connection in try canceller.running(connection) { try body(connection) } }
                }
            } onCancel: {
                canceller.cancel()
            }
        }
    }

    var operatorClass: String {
        let type = runState.withLock { $0.columnType }
        switch settings.metric {
        case "l2": return "\(type)_l2_ops"
        case "dot": return "\(type)_ip_ops"
        default: return "\(type)_cosine_ops"
        }
    }

    /// The distance operator of the metric (`<=>` cosine, `<->` L2, `<#>` negative inner product).
    var distanceOperator: String {
        switch settings.metric {
        case "l2": return "<->"
        case "dot": return "<#>"
        default: return "<=>"
        }
    }

    /// Whether `name` is a table's name as `sink.table` takes it (``PgvectorTableName``).
    static func validIdentifier(_ name: String) -> Bool { PgvectorTableName(parsing: name) != nil }
}
