extension PipelineConfiguration {
    /// `answer`: the chat model `sluice ask` calls, and how passages are chosen for it.
    public struct Answer: Sendable, Hashable {
        /// Who writes the answer (``Provider``).
        public var provider: Provider = .openai
        /// The API's base URL; nil: ``Provider/defaultBaseURL``.
        public var baseURL: String? = nil
        /// The model name sent; nil: ``Provider/defaultModel``.
        public var model: String? = nil
        /// The name of the environment variable holding the API key (the key itself never is in the file).
        public var apiKeyEnv: String? = nil
        /// Azure's `api-version`.
        public var apiVersion: String = "2024-06-01"
        /// The most tokens (cl100k_base) the numbered passages may take in the prompt.
        public var maxContextTokens: Int = 3000
        /// The most tokens the model may write (`max_tokens`).
        public var maxAnswerTokens: Int = 512
        /// The sampling temperature.
        public var temperature: Double = 0.2
        /// Passages retrieved for a question.
        public var k: Int = 8
        /// Whether the pipeline names a chat model to call: a provider other than the default, a server, a
        /// model or a key (`sluice serve` answers `POST /v1/ask` only then; `sluice ask` always tries).
        public var isConfigured: Bool { provider != .openai || baseURL != nil || model != nil || apiKeyEnv != nil }
        /// Hits scoring below this are not passages; nil: no minimum.
        public var minScore: Double? = nil
        /// The limit for one whole answer, streaming included.
        public var timeoutSeconds: Double = 120
        /// Retries of a failure before the first token (429, 5xx, a reset, a timeout).
        public var maxRetries: Int = 4
        /// The longest pause a 429's `Retry-After` is honoured for.
        public var maxRetryAfterSeconds: Double = 30
        /// Replaces the built-in instructions (cite with [n], say when the passages do not hold the answer).
        public var systemPrompt: String? = nil
        /// An answer that cites none of its passages is "not in the sources": its text is held back (kept in
        /// the answer's check) instead of being passed off as an answer. False: it is streamed and marked.
        public var requireCitations: Bool = true

        public init() {}

        /// The base URL in effect (nil only for Azure without `base_url`).
        public var effectiveBaseURL: String? { baseURL ?? provider.defaultBaseURL }
        /// The model name in effect.
        public var effectiveModel: String? { model ?? provider.defaultModel }
    }
}

extension PipelineConfiguration.Answer {
    /// Reads `answer.*` over the defaults.
    init(section: ConfigurationSection) throws {
        self.init()
        var s = section
        provider = try s.string("provider", oneOf: Provider.known.map(\.rawValue)).flatMap(Provider.named) ?? provider
        baseURL = try s.string("base_url") ?? baseURL
        model = try s.string("model") ?? model
        apiKeyEnv = try s.string("api_key_env") ?? apiKeyEnv
        apiVersion = try s.string("api_version") ?? apiVersion
        maxContextTokens = try s.int("max_context_tokens", min: 16, max: 10_000_000) ?? maxContextTokens
        maxAnswerTokens = try s.int("max_answer_tokens", min: 1, max: 10_000_000) ?? maxAnswerTokens
        temperature = try s.number("temperature", min: 0, max: 2) ?? temperature
        k = try s.int("k", min: 1, max: 1000) ?? k
        minScore = try s.number("min_score", min: -1e9, max: 1e9) ?? minScore
        timeoutSeconds = try s.number("timeout_seconds", min: 0.001, max: 86_400) ?? timeoutSeconds
        maxRetries = try s.int("max_retries", min: 0, max: 100) ?? maxRetries
        maxRetryAfterSeconds = try s.number("max_retry_after_seconds", min: 0, max: 86_400) ?? maxRetryAfterSeconds
        systemPrompt = try s.string("system_prompt") ?? systemPrompt
        requireCitations = try s.bool("require_citations") ?? requireCitations
        try s.finish()
        if model?.isEmpty == true { throw SluiceError(.configuration, "answer.model: must not be empty") }
    }
}
