import SluiceCore
import SluiceHTTP

/// Settings of a ``RemoteReranker``, built from `search.rerank` (docs/CONFIGURATION.md lists the keys and
/// their defaults, whose one home is ``PipelineConfiguration/Search/Rerank``).
public struct RemoteRerankerConfiguration: Sendable, CustomStringConvertible {
    private static let file = PipelineConfiguration.Search.Rerank()

    public var kind: PipelineConfiguration.Search.Rerank.Kind
    /// The rerank endpoint's full address.
    public var url: String
    /// The model name sent; nil: none (TEI, a vLLM serving one model).
    public var model: String?
    /// Sent as `Authorization: Bearer`; never in a message.
    public var apiKey: String?
    /// The most documents one request carries.
    public var maxDocumentsPerRequest: Int
    /// Each document is cut to this many characters before it is sent.
    public var maxDocumentCharacters: Int = Self.file.maxDocumentCharacters
    /// The most requests in flight.
    public var maxConcurrency: Int = Self.file.parallelism
    /// A client-side budget; nil: none until the server's 429s say otherwise.
    public var requestsPerMinute: Int?
    /// Retries of a transient failure (5xx, 408, 409, reset, time-out) and, apart, of a 429.
    public var maxRetries: Int = Self.file.maxRetries
    public var maxRetryAfter: Duration = .seconds(Self.file.maxRetryAfterSeconds)
    public var backoffBase: Duration = .milliseconds(100)
    public var backoffCap: Duration = .seconds(2)
    package var http: HTTPClient.Configuration = {
        var http = HTTPClient.Configuration()
        http.timeout = .seconds(30)
        http.connectTimeout = .seconds(5)
        return http
    }()

    public init(kind: PipelineConfiguration.Search.Rerank.Kind, url: String, model: String?) {
        self.kind = kind
        self.url = url
        self.model = model
        self.maxDocumentsPerRequest = kind.defaultMaxDocuments
    }

    /// Everything but the key.
    public var description: String {
        "RemoteRerankerConfiguration(kind: \(kind), url: \(redactedURL(url)), model: \(model ?? "none"), apiKey: \(apiKey == nil ? "none" : "<redacted>"))"
    }

    /// The one retry policy (`RetryPolicy`): a 429 pauses the budget every request of the reranker shares.
    package var retryPolicy: RetryPolicy {
        RetryPolicy(
            maxRetries: maxRetries,
            backoff: Backoff(base: backoffBase, cap: backoffCap),
            maxRetryAfter: maxRetryAfter,
            sharesBudget: true
        )
    }
}
