extension PipelineConfiguration {
    /// `sink`: the vector store. These are the defaults of every store's settings: each store maps the keys
    /// that apply to it from here (`SinkFactory`), and restates none.
    public struct Sink: Sendable, Hashable {
        /// The distance of a new table, collection or index.
        public enum Metric: String, Sendable, Hashable, CaseIterable {
            case cosine, l2, dot
        }

        /// How the local store searches (see docs/STORES.md).
        public enum LocalIndex: String, Sendable, Hashable, CaseIterable {
            /// Every vector compared with the query: exact, and slow past about 100,000 vectors.
            case exact
            /// An HNSW graph (hnswlib) beside the data: approximate, fast at millions of vectors.
            case hnsw
            /// Inverted lists of 8-bit codes in LMDB (docs/LOCAL_INDEX.md): approximate, and its memory is
            /// its centroids only.
            case ivf
        }

        /// `sink.ivf`: the local store's IVF index (`local_index: ivf`).
        public struct IVF: Sendable, Hashable {
            /// Lists scanned a search; nil (`auto`): 64, or every list when there are fewer.
            public var nprobe: Int? = nil
            /// Searches scan every vector while the store holds fewer than this; the first write that finds
            /// the store at that size trains the lists.
            public var exactBelow: Int = 10_000
            public init() {}
        }

        /// `sink.hnsw`: the local store's HNSW graph.
        public struct HNSW: Sendable, Hashable {
            /// Where the graph's bottom-layer nodes (their links and 8-bit vectors) live.
            public enum Nodes: String, Sendable, Hashable, CaseIterable {
                /// hnswlib's graph, wholly in memory (~630 bytes a 384-d vector).
                case memory
                /// Our own graph, its nodes in a file read with `pread` (~7 bytes a vector in memory, plus a
                /// 96-byte product-quantized code at 384 d that ranks a search's candidates once the graph
                /// outgrows 8 MB of records; docs/LOCAL_INDEX.md, "The graph's nodes in a file").
                case file
            }

            /// Neighbours per node (hnswlib's `M`; the bottom layer keeps twice as many).
            public var m: Int = 16
            /// Candidates considered while inserting.
            public var efConstruction: Int = 100
            /// Candidates considered while searching (at least `k`); nil (`auto`): chosen by the store's size.
            public var efSearch: Int? = nil
            /// Searches scan every vector while the store holds fewer than this (exact, and cheap there); the
            /// graph is kept up to date all the same.
            public var exactBelow: Int = 10_000
            /// Where the nodes live (`sink.hnsw.nodes`); `memory` until the file's cost is measured quietly.
            public var nodes: Nodes = .memory
            public init() {}
        }

        public var kind: Kind = .local
        /// The local store's folder; the JSONL file (`*.jsonl`) or folder of shards.
        public var path: String = ".sluice/index"
        /// Most records per write (each store also applies its own limit).
        public var batch: Int = 512
        /// Most bytes of encoded records per write (each store also applies its own limit).
        public var maxBatchBytes: Int = 8 << 20
        /// Server: a PostgreSQL connection URL (no password in it), or an HTTP base URL; nil: the store's
        /// usual local address.
        public var url: String? = nil
        /// Environment variable holding the PostgreSQL password.
        public var passwordEnv: String? = nil
        /// Environment variable holding the API key of an HTTP store.
        public var apiKeyEnv: String? = nil
        /// pgvector table.
        public var table: String = "sluice_chunks"
        /// Chroma/Qdrant collection.
        public var collection: String = "sluice"
        /// Pinecone index name.
        public var index: String? = nil
        /// Pinecone namespace (empty: the default namespace).
        public var namespace: String = ""
        /// Chroma tenant and database.
        public var tenant: String = "default_tenant"
        public var database: String = "default_database"
        public var metric: Metric = .cosine
        /// Retries of a write after its first attempt, on transient failures (with exponential backoff and
        /// full jitter; a store's `Retry-After` replaces the backoff). Replaces `retries`, which counted attempts.
        public var maxRetries: Int = 4
        /// JSONL: number of shard files when `path` is a folder.
        public var shards: Int = 1
        /// HTTP stores: limit for one request.
        public var timeoutSeconds: Double = 60
        /// Pinecone: most bytes of chunk text kept in a record's metadata (the limit is 40 KB per record).
        public var metadataTextBytes: Int = 32_000
        /// OpenAI vector store: the id of an existing store (`vs_…`); nil: the store named `collection`,
        /// created on first use.
        public var vectorStoreID: String? = nil
        /// OpenAI vector store: the longest wait for an uploaded file to be processed (chunked and embedded).
        public var processingTimeoutSeconds: Double = 600
        /// OpenAI vector store: the static chunking strategy's chunk size and overlap in tokens; nil: OpenAI's
        /// `auto` strategy.
        public var chunkingMaxTokens: Int? = nil
        public var chunkingOverlapTokens: Int? = nil
        /// Local store: exact scan or HNSW graph.
        public var localIndex: LocalIndex = .hnsw
        /// The local store's IVF index (`sink.ivf`).
        public var ivf = IVF()
        /// Local store: the HNSW graph's parameters.
        public var hnsw = HNSW()
        /// Local store: the most pages (estimated) one write transaction dirties; a larger upsert commits in
        /// several steps, a document's records together when they fit.
        public var localCommitPages: Int = Self.defaultLocalCommitPages
        /// `sink.local_commit_pages`'s default (docs/BENCHMARKS.md, "Flat memory with the default index").
        public static let defaultLocalCommitPages = 256
        public init() {}
    }
}

extension PipelineConfiguration.Sink {
    /// Reads `sink.*` over the defaults.
    init(section: ConfigurationSection) throws {
        self.init()
        var s = section
        kind = try s.string("kind").map { Kind(rawValue: $0) } ?? kind
        guard !kind.rawValue.isEmpty else { throw SluiceError(.configuration, "sink.kind: must not be empty") }
        path = try s.path("path") ?? path
        batch = try s.int("batch", min: 1, max: 100_000) ?? batch
        maxBatchBytes = try s.int("max_batch_bytes", min: 1024) ?? maxBatchBytes
        url = try s.string("url") ?? url
        passwordEnv = try s.string("password_env") ?? passwordEnv
        apiKeyEnv = try s.string("api_key_env") ?? apiKeyEnv
        table = try s.string("table") ?? table
        collection = try s.string("collection") ?? collection
        index = try s.string("index") ?? index
        namespace = try s.string("namespace") ?? namespace
        tenant = try s.string("tenant") ?? tenant
        database = try s.string("database") ?? database
        metric = try s.choice("metric") ?? metric
        if s.values["retries"] != nil, s.values["max_retries"] != nil {
            throw SluiceError(
                .configuration,
                "sink.retries and sink.max_retries are both set: keep sink.max_retries (sink.retries is its deprecated name, counting attempts)"
            )
        }
        maxRetries =
            try s.deprecatedInt(
                "retries",
                min: 1,
                replacement: "sink.max_retries",
                meaning: "retries after the first attempt, as embed.max_retries and answer.max_retries count",
                convert: { $0 - 1 }
            ) ?? maxRetries
        maxRetries = try s.int("max_retries", min: 0, max: 100) ?? maxRetries
        shards = try s.int("shards", min: 1) ?? shards
        timeoutSeconds = try s.number("timeout_seconds", min: 0.001, max: 86_400) ?? timeoutSeconds
        metadataTextBytes = try s.int("metadata_text_bytes", min: 0) ?? metadataTextBytes
        vectorStoreID = try s.string("vector_store_id") ?? vectorStoreID
        processingTimeoutSeconds =
            try s.number("processing_timeout_seconds", min: 1, max: 86_400) ?? processingTimeoutSeconds
        // OpenAI's static strategy: 100 to 4,096 tokens per chunk, an overlap of at most half of it.
        chunkingMaxTokens = try s.int("chunking_max_tokens", min: 100, max: 4096) ?? chunkingMaxTokens
        chunkingOverlapTokens = try s.int("chunking_overlap_tokens", min: 0, max: 2048) ?? chunkingOverlapTokens
        if let overlap = chunkingOverlapTokens {
            guard let size = chunkingMaxTokens, overlap <= size / 2 else {
                throw SluiceError(
                    .configuration,
                    "sink.chunking_overlap_tokens: needs sink.chunking_max_tokens, and at most half of it"
                )
            }
        }
        localIndex = try s.choice("local_index") ?? localIndex
        localCommitPages = try s.int("local_commit_pages", min: 1) ?? localCommitPages
        if let h = try s.section("hnsw") { hnsw = try HNSW(section: h) }
        if let i = try s.section("ivf") { ivf = try IVF(section: i) }
        try s.finish()
    }
}

extension PipelineConfiguration.Sink.HNSW {
    /// Reads `sink.hnsw.*` over the defaults.
    init(section: ConfigurationSection) throws {
        self.init()
        var s = section
        m = try s.int("m", min: 2, max: 512) ?? m
        efConstruction = try s.int("ef_construction", min: 1, max: 10_000) ?? efConstruction
        if try s.isAuto("ef_search") {
            efSearch = nil
        } else {
            efSearch = try s.int("ef_search", min: 1, max: 10_000) ?? efSearch
        }
        exactBelow = try s.int("exact_below", min: 0) ?? exactBelow
        nodes = try s.choice("nodes") ?? nodes
        try s.finish()
    }
}

extension PipelineConfiguration.Sink.IVF {
    /// Reads `sink.ivf.*` over the defaults: `nprobe` (`auto` or 1–65,536), `exact_below` (10,000).
    init(section: ConfigurationSection) throws {
        self.init()
        var s = section
        if try s.isAuto("nprobe") {
            nprobe = nil
        } else {
            nprobe = try s.int("nprobe", min: 1, max: 65_536) ?? nprobe
        }
        exactBelow = try s.int("exact_below", min: 0) ?? exactBelow
        try s.finish()
    }
}
