import Foundation

extension PipelineConfiguration.Extract {
    /// Image files beyond OCR (`extract.images`).
    public struct Images: Sendable, Hashable {
        /// A vision model's description of each image file, indexed beside its OCR text.
        public var caption = Caption()
        public init() {}
    }
}

extension PipelineConfiguration.Extract.Images {
    /// `extract.images.caption`: a vision model behind an OpenAI-compatible chat completions API (OpenAI,
    /// Azure OpenAI, Ollama or vLLM serving a vision model) describes each image file; the caption is indexed
    /// beside the OCR text. Off by default. Captions are kept in the extraction cache by image hash, model,
    /// prompt and the request's settings, so a re-run never pays twice.
    ///
    /// Changing ``model`` or ``prompt`` re-captions nothing already indexed by itself (only images added or
    /// changed later get the new captions); raising ``revision`` is the request to re-caption every image.
    public struct Caption: Sendable, Hashable {
        public var enabled: Bool = false
        /// Who describes the images (the providers of `answer.provider`).
        public var provider: PipelineConfiguration.Answer.Provider = .openai
        /// The API's base URL; nil: the provider's.
        public var baseURL: String? = nil
        /// The model name sent; nil: the provider's default (`gpt-4o-mini` for OpenAI; none for Azure,
        /// whose deployment names the model). Ollama needs a vision model named (e.g. `llava`).
        public var model: String? = nil
        /// The environment variable holding the API key (the key itself never is in the file).
        public var apiKeyEnv: String? = nil
        /// Azure's `api-version`.
        public var apiVersion: String = "2024-06-01"
        /// The instruction sent with each image.
        public var prompt: String = Self.defaultPrompt
        /// The image's `detail` (`low`: one 512×512 tile, cheapest; `high`; `auto`).
        public var detail: String = "low"
        /// The most tokens one caption may take (`max_tokens`).
        public var maxTokens: Int = 300
        /// Larger image files are not sent (OpenAI refuses images over 20 MB): their caption is refused
        /// with that reason (they are not downscaled).
        public var maxImageMB: Double = 20
        /// Caption requests in flight at most.
        public var parallelism: Int = 4
        /// A client-side budget; nil: none until the server's 429s say otherwise.
        public var requestsPerMinute: Int? = nil
        /// The limit for one request.
        public var timeoutSeconds: Double = 60
        /// Retries of a transient failure (5xx, 408, 409, a reset, a timeout) and, apart, of a 429.
        public var maxRetries: Int = 4
        /// The longest pause a 429's `Retry-After` is honoured for.
        public var maxRetryAfterSeconds: Double = 30
        /// Raise it to re-caption the images already indexed (after a change of model or prompt): it is
        /// one of the settings that shape an image's chunks, and part of the captions' cache key, so every
        /// image and picture is sent once more.
        public var revision: Int = 1
        /// The pictures inside PDFs, DOCX and PPTX (`pictures`): off by default, even with captions on.
        public var pictures = Pictures()

        public static let defaultPrompt =
            "Describe this image for a search index in two or three plain sentences: the subject, the setting, notable objects and colours, and any visible text."
        public static let details = ["low", "high", "auto"]

        public init() {}

        /// The base URL in effect (nil only for Azure without `base_url`).
        public var effectiveBaseURL: String? { baseURL ?? provider.defaultBaseURL }
        /// The model name in effect.
        public var effectiveModel: String? { model ?? provider.defaultModel }
        /// ``maxImageMB`` in bytes.
        public var maxImageBytes: Int { Int(maxImageMB * 1_048_576) }
    }
}

extension PipelineConfiguration.Extract.Images {
    /// Reads `extract.images.*` over the defaults.
    init(section: ConfigurationSection) throws {
        self.init()
        var s = section
        if let c = try s.section("caption") { caption = try Caption(section: c) }
        try s.finish()
    }
}

extension PipelineConfiguration.Extract.Images.Caption {
    /// Reads `extract.images.caption.*` over the defaults.
    init(section: ConfigurationSection) throws {
        self.init()
        var s = section
        typealias Provider = PipelineConfiguration.Answer.Provider
        enabled = try s.bool("enabled") ?? enabled
        provider = try s.string("provider", oneOf: Provider.known.map(\.rawValue)).flatMap(Provider.named) ?? provider
        baseURL = try s.string("base_url") ?? baseURL
        model = try s.string("model") ?? model
        apiKeyEnv = try s.string("api_key_env") ?? apiKeyEnv
        apiVersion = try s.string("api_version") ?? apiVersion
        prompt = try s.string("prompt") ?? prompt
        detail = try s.string("detail", oneOf: Self.details) ?? detail
        maxTokens = try s.int("max_tokens", min: 1, max: 100_000) ?? maxTokens
        maxImageMB = try s.number("max_image_mb", min: 0.000001, max: 1024) ?? maxImageMB
        parallelism = try s.int("parallelism", min: 1, max: 256) ?? parallelism
        requestsPerMinute = try s.int("requests_per_minute", min: 1) ?? requestsPerMinute
        timeoutSeconds = try s.number("timeout_seconds", min: 0.001, max: 86_400) ?? timeoutSeconds
        maxRetries = try s.int("max_retries", min: 0, max: 100) ?? maxRetries
        maxRetryAfterSeconds = try s.number("max_retry_after_seconds", min: 0, max: 86_400) ?? maxRetryAfterSeconds
        revision = try s.int("revision", min: 1) ?? revision
        if let p = try s.section("pictures") { pictures = try Pictures(section: p) }
        try s.finish()
        if model?.isEmpty == true {
            throw SluiceError(.configuration, "extract.images.caption.model: must not be empty")
        }
        if prompt.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            throw SluiceError(.configuration, "extract.images.caption.prompt: must not be empty")
        }
        if enabled && effectiveBaseURL == nil {
            throw SluiceError(
                .configuration,
                "extract.images.caption.base_url: required for \(provider.rawValue)"
            )
        }
    }
}
