extension PipelineConfiguration.Search {
    /// `search.rerank`: the optional second stage of a search, a cross-encoder behind a `/rerank` API.
    public struct Rerank: Sendable, Hashable {
        /// The API's dialect (`search.rerank.kind`).
        public var kind: Kind = .cohere
        /// The full address of the rerank endpoint (`http://127.0.0.1:8080/rerank`,
        /// `https://api.cohere.com/v2/rerank`); nil: no reranking.
        public var url: String? = nil
        /// The model name sent (TEI serves one model and takes none).
        public var model: String? = nil
        /// The name of the environment variable holding the API key (the key itself never is in the file).
        public var apiKeyEnv: String? = nil
        /// How many of the first stage's best results are re-scored (at least `k`).
        public var topN: Int = 50
        /// How long the second stage may take, retries included; past it the first stage's order is returned
        /// and the results say so.
        public var deadlineSeconds: Double = 5
        /// The most documents one request carries; nil: the kind's ``Kind/defaultMaxDocuments``.
        public var maxDocuments: Int? = nil
        /// Each document's text is cut to this many characters before it is sent.
        public var maxDocumentCharacters: Int = 4096
        /// Requests in flight at once when the documents take more than one request.
        public var parallelism: Int = 4
        /// A client-side budget of requests per minute; nil: none until the server answers 429.
        public var requestsPerMinute: Int? = nil
        /// Retries of a 429, a 5xx, a reset or a time-out (within the deadline).
        public var maxRetries: Int = 2
        /// The longest server wait (`Retry-After`) honoured; the deadline cuts any wait in any case.
        public var maxRetryAfterSeconds: Double = 10
        /// A PEM CA bundle to verify the server with.
        public var caBundle: String? = nil

        public init() {}

        /// Whether the pipeline names a reranker (`search.rerank.url` is set).
        public var isConfigured: Bool { url != nil }

        /// ``maxDocuments``, or the kind's default.
        public var documentsPerRequest: Int { maxDocuments ?? kind.defaultMaxDocuments }

        /// The name results report: ``model``, else the kind's name.
        public var modelName: String { model ?? kind.rawValue }
    }
}

extension PipelineConfiguration.Search.Rerank {
    /// Who serves the cross-encoder (`search.rerank.kind`): which of the two shapes of `/rerank` it speaks
    /// and its documented limits. An open set, as ``PipelineConfiguration/Embed/Provider`` is.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        /// The two bodies the serving stacks use.
        public enum Shape: String, Sendable, Hashable {
            /// Hugging Face TEI: `{query, texts, truncate}` → `[{index, score}]`.
            case tei
            /// Cohere's, copied by Jina, vLLM and others: `{model, query, documents, top_n}` →
            /// `{results: [{index, relevance_score}]}`.
            case cohere
        }

        /// The name in the pipeline file.
        public let rawValue: String
        public let shape: Shape
        /// The most documents one request may carry unless `search.rerank.max_documents` says otherwise.
        public let defaultMaxDocuments: Int
        /// Whether the API needs `search.rerank.model`.
        public let requiresModel: Bool

        public init(_ name: String, shape: Shape, defaultMaxDocuments: Int, requiresModel: Bool) {
            rawValue = name
            self.shape = shape
            self.defaultMaxDocuments = max(1, defaultMaxDocuments)
            self.requiresModel = requiresModel
        }

        public var description: String { rawValue }
        public static func == (lhs: Kind, rhs: Kind) -> Bool { lhs.rawValue == rhs.rawValue }
        public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

        /// Text Embeddings Inference: 32 is its `--max-client-batch-size` default (413 above it).
        public static let tei = Kind("tei", shape: .tei, defaultMaxDocuments: 32, requiresModel: false)
        /// Cohere's `/v2/rerank`: it documents 1,000 documents per request as the most for good latency.
        public static let cohere = Kind("cohere", shape: .cohere, defaultMaxDocuments: 1000, requiresModel: true)
        /// Jina's `/v1/rerank` (Cohere's shape).
        public static let jina = Kind("jina", shape: .cohere, defaultMaxDocuments: 1000, requiresModel: true)
        /// vLLM's `/rerank` (`/v1/rerank`, `/v2/rerank`; Cohere's shape; the served model is the default).
        public static let vllm = Kind("vllm", shape: .cohere, defaultMaxDocuments: 1000, requiresModel: false)

        /// The kinds a pipeline file may name.
        public static let known: [Kind] = [tei, cohere, jina, vllm]

        /// The known kind called `name`.
        public static func named(_ name: String) -> Kind? { known.first { $0.rawValue == name } }
    }
}

extension PipelineConfiguration.Search.Rerank {
    /// Reads `search.rerank.*` over the defaults.
    init(section: ConfigurationSection) throws {
        self.init()
        var s = section
        kind = try s.string("kind", oneOf: Kind.known.map(\.rawValue)).flatMap(Kind.named) ?? kind
        url = try s.string("url") ?? url
        model = try s.string("model") ?? model
        apiKeyEnv = try s.string("api_key_env") ?? apiKeyEnv
        topN = try s.int("top_n", min: 1, max: 1000) ?? topN
        deadlineSeconds = try s.number("deadline_seconds", min: 0.001, max: 3600) ?? deadlineSeconds
        maxDocuments = try s.int("max_documents", min: 1, max: 10_000) ?? maxDocuments
        maxDocumentCharacters = try s.int("max_document_chars", min: 16) ?? maxDocumentCharacters
        parallelism = try s.int("parallelism", min: 1, max: 64) ?? parallelism
        requestsPerMinute = try s.int("rpm", min: 1) ?? requestsPerMinute
        maxRetries = try s.int("max_retries", min: 0, max: 100) ?? maxRetries
        maxRetryAfterSeconds = try s.number("max_retry_after_seconds", min: 0, max: 86_400) ?? maxRetryAfterSeconds
        caBundle = try s.string("ca_bundle") ?? caBundle
        try s.finish()
        if let url { try PipelineConfiguration.checkHTTPURL(url, key: "search.rerank.url") }
        if url != nil, kind.requiresModel, model == nil {
            throw SluiceError(.configuration, "search.rerank.model is required for kind \(kind.rawValue)")
        }
    }
}
