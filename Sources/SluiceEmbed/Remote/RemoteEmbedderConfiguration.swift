import SluiceCore
import SluiceHTTP

/// Settings of a ``RemoteEmbedder``: where the provider is, how it is spoken to and how hard it may be
/// driven. Built from the `embed:` section of a pipeline file.
///
/// Every default that a pipeline file can set is read from ``PipelineConfiguration/Embed``, the one home of
/// the `embed.*` defaults (docs/CONFIGURATION.md lists them); a library user who builds this type directly
/// gets the same numbers as a pipeline file that leaves the keys out. What only this type knows (the
/// backoff steps, the rate-limit retries, the provider's most inputs per request) is stated here.
public struct RemoteEmbedderConfiguration: Sendable, CustomStringConvertible {
    /// The defaults of the `embed:` section.
    private static let file = PipelineConfiguration.Embed()

    /// The most inputs one request may carry (OpenAI's limit, also below Azure's, Ollama's and TEI's
    /// defaults). `embed.batch` is not a provider limit: the pipeline's batcher applies it.
    public static let maxInputsPerRequest = 2048

    /// The wire dialect: `openai`, `azure-openai`, `ollama`, `tei`.
    public var provider: String
    /// Base URL: `https://api.openai.com/v1` (OpenAI), the deployment URL (Azure), the server root (Ollama, TEI).
    public var baseURL: String
    public var model: String
    /// Dimensions to ask for (`dimensions` in the request); nil: the model's native size.
    public var requestedDimensions: Int?
    /// The dimension of the vectors that come back (``EmbedderIdentity/dimensions``).
    public var dimensions: Int
    /// The secret, read from the environment variable the pipeline file names. Never printed.
    public var apiKey: String?
    /// Azure's `api-version` query parameter (`embed.api_version`).
    public var apiVersion: String = Self.file.apiVersion
    /// `base64` (little-endian float32, about 4× smaller) or `float` (`embed.encoding_format`).
    public var encodingFormat: String = Self.file.encodingFormat.rawValue
    /// Client-side budgets; nil: unlimited until the provider's headers say otherwise.
    public var requestsPerMinute: Int?
    public var tokensPerMinute: Int?
    /// The most requests in flight; adaptive concurrency stays at or below it. Defaults to the
    /// provider's ``PipelineConfiguration/Embed/Provider/defaultParallelism`` (`embed.parallelism`).
    public var maxConcurrency: Int
    /// Retries after a transient failure (5xx, 408, 409, reset, timeout) before the chunks' documents fail
    /// (`embed.max_retries`: retries after the first attempt).
    public var maxRetries: Int = Self.file.maxRetries
    /// Retries after a 429 rate limit before giving up on a batch.
    public var maxRateLimitRetries: Int = 30
    /// The longest pause a `Retry-After`/`retry-after-ms` is honoured for; a longer one (or an absurd one:
    /// `1e20`, `inf`) waits this long, then the request is retried (still within `maxRateLimitRetries`)
    /// (`embed.max_retry_after_seconds`).
    public var maxRetryAfter: Duration = .seconds(Self.file.maxRetryAfterSeconds)
    /// First backoff step and its cap.
    public var backoffBase: Duration = .milliseconds(250)
    public var backoffCap: Duration = .seconds(30)
    /// Per-request limits: ``maxInputsPerRequest`` inputs, and `embed.max_input_tokens`,
    /// `embed.max_batch_tokens`, `embed.max_request_bytes`.
    public var limits = EmbedderLimits(
        maxBatchSize: Self.maxInputsPerRequest,
        maxTokensPerInput: Self.file.maxInputTokens,
        maxTokensPerRequest: Self.file.maxBatchTokens,
        maxRequestBytes: Self.file.maxRequestBytes
    )
    /// The HTTP client's settings (timeouts: `embed.timeout_seconds`, `embed.connect_timeout_seconds`; CA bundle).
    package var http: HTTPClient.Configuration = {
        var http = HTTPClient.Configuration()
        http.timeout = .seconds(Self.file.timeoutSeconds)
        http.connectTimeout = .seconds(Self.file.connectTimeoutSeconds)
        return http
    }()
    /// The tokenizer that counts tokens for chunking and budgets: `cl100k_base`, or `words` for an estimate
    /// (`embed.tokenizer`).
    public var tokenizer: String = Self.file.tokenizer.rawValue

    public init(provider: String, baseURL: String, model: String, dimensions: Int) {
        self.provider = provider
        self.baseURL = baseURL
        self.model = model
        self.dimensions = dimensions
        self.maxConcurrency =
            PipelineConfiguration.Embed.Provider.named(provider)?.defaultParallelism
            ?? PipelineConfiguration.Embed.Provider.ollama.defaultParallelism
    }

    /// Everything but the key.
    public var description: String {
        "RemoteEmbedderConfiguration(provider: \(provider), baseURL: \(baseURL), model: \(model), dimensions: \(dimensions), apiKey: \(apiKey == nil ? "none" : "<redacted>"))"
    }
}

extension RemoteEmbedderConfiguration {
    /// The one retry policy (``RetryPolicy``) with this embedder's numbers: rate limits pause the budget
    /// every request shares.
    package var retryPolicy: RetryPolicy {
        RetryPolicy(
            maxRetries: maxRetries,
            maxRateLimitRetries: maxRateLimitRetries,
            backoff: Backoff(base: backoffBase, cap: backoffCap),
            maxRetryAfter: maxRetryAfter,
            sharesBudget: true
        )
    }
}
