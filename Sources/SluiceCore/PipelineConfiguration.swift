import Foundation

/// Everything a run needs, as read from a pipeline file (see `PipelineConfiguration+Decoding.swift` for
/// the keys and their defaults).
public struct PipelineConfiguration: Sendable, Hashable {
    public struct Source: Sendable, Hashable {
        /// Root folder of the corpus; document keys are paths relative to it.
        public var path: String = "./samples"
        public var include: [String] = ["**/*"]
        public var exclude: [String] = ["**/.git/**", "**/.sluice/**"]
        /// Follow symbolic links (never outside the root, never in loops).
        public var followSymlinks: Bool = false
        public init() {}
    }

    public struct Extract: Sendable, Hashable {
        public var maxFileMB: Double = 200
        public var parallelism: Int = ProcessInfo.processInfo.activeProcessorCount
        /// Per-document time limit.
        public var timeoutSeconds: Double = 120
        /// DOCX limits and JSON fields (`PipelineConfiguration+Documents.swift`).
        public var docx = DOCX()
        public var json = JSON()
        // PDF and OCR (see PipelineConfiguration+Media.swift).
        public var ocr = OCR()
        public var pdf = PDF()
        /// Run PDF and OCR extraction in supervised worker processes, so that a crash or a hang in C code
        /// fails only its document.
        public var isolate: Bool = true
        /// Most megabytes of PDF and OCR text kept in the state across runs (the extraction cache); 0 turns
        /// the cache off (and empties it at the end of the next run).
        public var cacheMB: Double = 512
        public init() {}
    }

    public struct Chunk: Sendable, Hashable {
        /// Open-ended: `recursive` (sections never merged) or `structured` (small sections under one
        /// heading merged, splits preferred at headings, pages, paragraphs).
        public var strategy: String = "recursive"
        public var maxTokens: Int = 256
        public var overlapTokens: Int = 32
        public var parallelism: Int = ProcessInfo.processInfo.activeProcessorCount
        public init() {}
    }

    public struct Embed: Sendable, Hashable {
        /// Open-ended: `hash` or `minilm` for now.
        public var provider: String = "hash"
        public var model: String? = nil
        public var dimensions: Int = 384
        /// Most texts per request.
        public var batch: Int = 64
        /// Most tokens per request.
        public var maxBatchTokens: Int = 300_000
        /// How long a partial batch may wait for more chunks before it is sent.
        public var lingerMilliseconds: Int = 20
        /// Requests in flight at once.
        public var parallelism: Int = 2

        // Remote providers (openai, azure-openai, ollama, tei).
        /// The API's base URL (OpenAI: `https://api.openai.com/v1`; Azure: the deployment URL).
        public var baseURL: String? = nil
        /// The name of the environment variable holding the API key (the key itself never is in the file).
        public var apiKeyEnv: String? = nil
        /// Azure's `api-version`.
        public var apiVersion: String = "2024-02-01"
        /// `base64` or `float`.
        public var encodingFormat: String = "base64"
        /// Send `dimensions` in the request; nil: only for `text-embedding-3-*` models.
        public var requestDimensions: Bool? = nil
        /// Client-side budgets.
        public var requestsPerMinute: Int? = nil
        public var tokensPerMinute: Int? = nil
        /// Retries of a transient failure before the batch's documents fail.
        public var maxRetries: Int = 6
        /// The longest pause a 429's `Retry-After` (or `retry-after-ms`) is honoured for; a longer or absurd
        /// one waits this long, then the request is retried.
        public var maxRetryAfterSeconds: Double = 120
        public var timeoutSeconds: Double = 120
        public var connectTimeoutSeconds: Double = 10
        /// A PEM CA bundle to verify the provider with.
        public var caBundle: String? = nil
        /// The largest request body.
        public var maxRequestBytes: Int = 8 << 20
        /// Per-input token limit of the model (chunks never exceed it).
        public var maxInputTokens: Int = 8192
        /// The tokenizer counting tokens for chunking and budgets.
        public var tokenizer: String = "cl100k_base"

        public init() {}
    }

    public struct Sink: Sendable, Hashable {
        /// Open-ended: `local`, `jsonl`, `pgvector`, `chroma`, `qdrant`, `pinecone`.
        public var kind: String = "local"
        /// The local store's folder; the JSONL file (`*.jsonl`) or folder of shards.
        public var path: String = ".sluice/index"
        /// Most records per write (each store also applies its own limit).
        public var batch: Int = 512
        /// Most bytes of encoded records per write (each store also applies its own limit).
        public var maxBatchBytes: Int = 8 << 20
        /// Server: a PostgreSQL connection URL (no password in it), or an HTTP base URL.
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
        /// `cosine`, `l2` or `dot`.
        public var metric: String = "cosine"
        /// Attempts per write on transient failures (with exponential backoff and full jitter).
        public var retries: Int = 5
        /// JSONL: number of shard files when `path` is a folder.
        public var shards: Int = 1
        /// HTTP stores: limit for one request.
        public var timeoutSeconds: Double = 60
        /// Pinecone: most bytes of chunk text kept in a record's metadata (the limit is 40 KB per record).
        public var metadataTextBytes: Int = 32_000
        public init() {}
    }

    public struct Run: Sendable, Hashable {
        /// Delete the vectors of documents that vanished from the source (full sync).
        public var prune: Bool = false
        /// A run that would delete more than this share of the stored vectors stops before deleting.
        public var maxDeleteFraction: Double = 0.2
        /// Capacity, in documents, of each buffer between two stages.
        public var buffer: Int = 16
        /// Writers to the sink at once.
        public var upsertParallelism: Int = 2
        public init() {}
    }

    public var source = Source()
    public var extract = Extract()
    public var chunk = Chunk()
    public var embed = Embed()
    public var sink = Sink()
    public var run = Run()
    /// Folder of the LMDB checkpoint.
    public var state: String = ".sluice/state"
    /// The file the configuration came from, if any (relative paths resolve against its folder).
    public var baseDirectory: URL? = nil

    public init() {}

    /// Resolves a configured path: absolute paths as they are, relative ones against the pipeline file's
    /// folder (or the working directory when there is no file).
    public func resolve(_ path: String) -> URL {
        let expanded = (path as NSString).expandingTildeInPath
        if expanded.hasPrefix("/") { return URL(fileURLWithPath: expanded).standardizedFileURL }
        let base = baseDirectory ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        return base.appendingPathComponent(expanded).standardizedFileURL
    }
}
