extension PipelineConfiguration {
    /// `embed`: the embedder, local or remote.
    public struct Embed: Sendable, Hashable {
        /// The arithmetic of a local model's dense layers.
        public enum Precision: String, Sendable, Hashable, CaseIterable {
            /// Single precision throughout: the model's own computation (the default).
            case fp32
            /// Dynamic quantization of the dense layers (int8 weights, activations quantized per row): faster,
            /// with vectors close to but not equal to fp32's, under an embedder identity of its own.
            case int8
        }

        /// How a remote provider returns vectors.
        public enum EncodingFormat: String, Sendable, Hashable, CaseIterable {
            case base64
            case float
        }

        /// The BPE vocabulary that counts tokens for a remote provider.
        public enum Tokenizer: String, Sendable, Hashable, CaseIterable {
            case cl100k = "cl100k_base"
            case o200k = "o200k_base"
        }

        /// The default is the real local model (the one the README's first command uses): a file without an
        /// `embed` section never indexes silently with the ``Provider/hash`` test embedder, which must be named.
        public var provider: Provider = .minilm
        public var model: String? = nil
        public var dimensions: Int = 384
        /// The local model's arithmetic (`minilm` only).
        public var precision: Precision = .fp32
        /// Most texts per request.
        public var batch: Int = 64
        /// Most tokens per request.
        public var maxBatchTokens: Int = 300_000
        /// How long a partial batch may wait for more chunks before it is sent.
        public var lingerMilliseconds: Int = 20
        /// Requests in flight at once (remote providers: the most; the actual number adapts below it);
        /// nil: the provider's ``Provider/defaultParallelism``. ``requestsInFlight`` is the value in effect.
        public var parallelism: Int? = nil

        // Remote providers (openai, azure-openai, ollama, tei).
        /// The API's base URL (OpenAI: `https://api.openai.com/v1`; Azure: the deployment URL).
        public var baseURL: String? = nil
        /// The name of the environment variable holding the API key (the key itself never is in the file).
        public var apiKeyEnv: String? = nil
        /// Azure's `api-version`.
        public var apiVersion: String = "2024-02-01"
        public var encodingFormat: EncodingFormat = .base64
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
        public var tokenizer: Tokenizer = .cl100k

        public init() {}

        /// `parallelism`, or the provider's default when it is not set.
        public var requestsInFlight: Int { parallelism ?? provider.defaultParallelism }
    }
}

extension PipelineConfiguration.Embed {
    /// Reads `embed.*` over the defaults.
    init(section: ConfigurationSection) throws {
        self.init()
        var s = section
        provider = try s.string("provider", oneOf: Provider.known.map(\.rawValue)).flatMap(Provider.named) ?? provider
        model = try s.string("model") ?? model
        dimensions = try s.int("dimensions", min: 2) ?? dimensions
        precision = try s.choice("precision") ?? precision
        batch = try s.int("batch", min: 1, max: 65_536) ?? batch
        maxBatchTokens = try s.int("max_batch_tokens", min: 1, max: 100_000_000) ?? maxBatchTokens
        lingerMilliseconds = try s.int("linger_ms", min: 0) ?? lingerMilliseconds
        parallelism = try s.int("parallelism", min: 1, max: 4_096)
        // Remote providers.
        baseURL = try s.string("base_url") ?? baseURL
        apiKeyEnv = try s.string("api_key_env") ?? apiKeyEnv
        apiVersion = try s.string("api_version") ?? apiVersion
        encodingFormat = try s.choice("encoding_format") ?? encodingFormat
        requestDimensions = try s.bool("request_dimensions") ?? requestDimensions
        requestsPerMinute = try s.int("rpm", min: 1) ?? requestsPerMinute
        tokensPerMinute = try s.int("tpm", min: 1) ?? tokensPerMinute
        maxRetries = try s.int("max_retries", min: 0) ?? maxRetries
        maxRetryAfterSeconds = try s.number("max_retry_after_seconds", min: 0, max: 86_400) ?? maxRetryAfterSeconds
        timeoutSeconds = try s.number("timeout_seconds", min: 0.001, max: 86_400) ?? timeoutSeconds
        connectTimeoutSeconds =
            try s.number("connect_timeout_seconds", min: 0.001, max: 86_400) ?? connectTimeoutSeconds
        caBundle = try s.string("ca_bundle") ?? caBundle
        maxRequestBytes = try s.int("max_request_bytes", min: 1024) ?? maxRequestBytes
        maxInputTokens = try s.int("max_input_tokens", min: 8) ?? maxInputTokens
        tokenizer = try s.choice("tokenizer") ?? tokenizer
        try s.finish()
    }
}
