import SluiceCore
import SluiceHTTP

/// Settings of a ``RemoteEmbedder``: where the provider is, how it is spoken to and how hard it may be
/// driven. Built from the `embed:` section of a pipeline file.
public struct RemoteEmbedderConfiguration: Sendable, CustomStringConvertible {
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
    /// Azure's `api-version` query parameter.
    public var apiVersion: String = "2024-02-01"
    /// `base64` (little-endian float32, about 4× smaller) or `float`.
    public var encodingFormat: String = "base64"
    /// Client-side budgets; nil: unlimited until the provider's headers say otherwise.
    public var requestsPerMinute: Int?
    public var tokensPerMinute: Int?
    /// The most requests in flight; adaptive concurrency stays at or below it.
    public var maxConcurrency: Int = 8
    /// Retries after a transient failure (5xx, 408, 409, reset, timeout) before the chunks' documents fail.
    public var maxRetries: Int = 6
    /// Retries after a 429 rate limit before giving up on a batch.
    public var maxRateLimitRetries: Int = 30
    /// The longest pause a `Retry-After`/`retry-after-ms` is honoured for; a longer one (or an absurd one:
    /// `1e20`, `inf`) waits this long, then the request is retried (still within `maxRateLimitRetries`).
    public var maxRetryAfter: Duration = HTTPResponse.defaultRetryAfterCap
    /// First backoff step and its cap.
    public var backoffBase: Duration = .milliseconds(250)
    public var backoffCap: Duration = .seconds(30)
    /// Per-request limits (OpenAI's by default).
    public var limits = EmbedderLimitsSetting()
    /// The HTTP client's settings (timeouts, CA bundle).
    package var http = HTTPClient.Configuration()
    /// The tokenizer that counts tokens for chunking and budgets: `cl100k_base`, or `words` for an estimate.
    public var tokenizer: String = "cl100k_base"

    public init(provider: String, baseURL: String, model: String, dimensions: Int) {
        self.provider = provider
        self.baseURL = baseURL
        self.model = model
        self.dimensions = dimensions
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

/// Per-request limits of a provider.
public struct EmbedderLimitsSetting: Sendable, Hashable {
    public var maxInputs = 2048
    public var maxTokensPerInput = 8192
    public var maxTokensPerRequest = 300_000
    /// The largest request body; batches are split below it.
    public var maxRequestBytes = 8 << 20

    public init() {}
}
