import Foundation
import SluiceCore
import SluiceHTTP
import Synchronization

/// An embedder behind an HTTP API: OpenAI and compatible servers, Azure OpenAI, Ollama, TEI.
///
/// Every request goes through one `RateBudget` (requests/minute, tokens/minute, kept in step with the
/// provider's headers; a request the provider did not count gives its share back) and one `AdaptiveConcurrency` limit (AIMD within `embed.parallelism`), shared
/// by all batches in flight. Answers are handled as `ProviderAnswer`s:
/// - too large (400/413, and OpenAI's 429 "Request too large … per min"): the batch is split in two
///   halves, each retried on its own, and the smaller size is remembered (`RequestSizeLimit`) so that
///   later batches are cut before they are sent; a single input that is too large fails at once;
/// - 429 rate limit: the whole budget pauses for `retry-after-ms`/`Retry-After` (at most
///   `maxRetryAfter`; else an exponential backoff with full jitter), concurrency halves, the batch is
///   retried (`RetryPolicy`, as every client that retries);
/// - 429 insufficient_quota, 401, 403: ``SluiceError/Code/providerRefused``; from then on every call fails
///   the same way at once, without a request (the pipeline stops and exits 5);
/// - 408/409/5xx, resets, timeouts: retried with backoff up to `maxRetries`, then the batch fails with
///   the last reason.
/// Waits (backoff, rate-limit pauses) end at once when the run's ``ShutdownSignal`` is requested: the
/// batch then fails with ``SluiceError/Code/interrupted``.
/// The API key travels in a header only and is scrubbed from every message.
public final class RemoteEmbedder: Embedder {
    public let identity: EmbedderIdentity
    public let limits: EmbedderLimits
    public let tokenCounter: any TokenCounter
    public let configuration: RemoteEmbedderConfiguration

    private let dialect: any EmbeddingDialect
    private let client: HTTPClient
    /// The one request loop: the rate budget and the adaptive concurrency limit as its gate, `maxRetries`
    /// transient retries, `maxRateLimitRetries` rate-limited ones, pauses of the shared budget.
    private let call: RemoteCall<BudgetGate, ContinuousClock>
    private let counters = Mutex(EmbedderRequestStats())
    private let sizeLimit = Mutex(RequestSizeLimit())

    /// The providers this embedder speaks.
    public static let providers = ["openai", "azure-openai", "ollama", "tei"]

    /// - Throws: ``SluiceError/Code/configuration`` for an unknown provider or a missing tokenizer file.
    public convenience init(configuration: RemoteEmbedderConfiguration, tokenCounter: (any TokenCounter)? = nil) throws
    {
        try self.init(configuration: configuration, tokenCounter: tokenCounter, client: nil)
    }

    /// With a given HTTP client (tests, a shared client).
    package init(
        configuration: RemoteEmbedderConfiguration,
        tokenCounter: (any TokenCounter)? = nil,
        client: HTTPClient?
    ) throws {
        switch configuration.provider {
        case "openai": dialect = OpenAIDialect(azure: false)
        case "azure-openai": dialect = OpenAIDialect(azure: true)
        case "ollama": dialect = OllamaDialect()
        case "tei": dialect = TEIDialect()
        default:
            throw SluiceError(
                .configuration,
                "embed.provider: '\(configuration.provider)' is not a remote provider (expected one of: \(Self.providers.joined(separator: ", ")))"
            )
        }
        guard configuration.baseURL.hasPrefix("http://") || configuration.baseURL.hasPrefix("https://") else {
            throw SluiceError(
                .configuration,
                "embed.base_url: '\(redactedURL(configuration.baseURL))' is not an http(s) URL"
            )
        }
        self.configuration = configuration
        self.identity = EmbedderIdentity(
            provider: configuration.provider,
            model: configuration.model,
            dimensions: configuration.dimensions
        )
        self.limits = configuration.limits
        self.tokenCounter = try tokenCounter ?? BPETokenizer.named(configuration.tokenizer)
        self.client = client ?? HTTPClient(configuration: configuration.http)
        let gate = BudgetGate(
            budget: RateBudget(
                requestsPerMinute: configuration.requestsPerMinute,
                tokensPerMinute: configuration.tokensPerMinute
            ),
            concurrency: AdaptiveConcurrency(
                maximum: configuration.maxConcurrency,
                initial: max(1, configuration.maxConcurrency / 2)
            )
        )
        self.call = RemoteCall(policy: configuration.retryPolicy, gate: gate)
    }

    public var requestStats: EmbedderRequestStats? { counters.withLock { $0 } }

    public func embed(_ texts: [String]) async throws -> [[Float]] {
        try await embed(texts, tokenCounts: texts.map { tokenCounter.count($0) })
    }

    public func embed(_ texts: [String], tokenCounts: [Int]) async throws -> [[Float]] {
        guard !texts.isEmpty else { return [] }
        precondition(texts.count == tokenCounts.count, "one token count per text")
        return try await send(texts[...], tokens: tokenCounts[...])
    }

    /// Sends one batch until it succeeds, is split, or fails for good.
    private func send(_ texts: ArraySlice<String>, tokens: ArraySlice<Int>) async throws -> [[Float]] {
        try call.checkRefusal()
        let total = tokens.reduce(0, +)
        let l = configuration.limits
        if texts.count > 1, texts.count > l.maxBatchSize || total > l.maxTokensPerRequest {
            return try await split(texts, tokens: tokens)
        }
        if texts.count > 1, !sizeLimit.withLock({ $0.admits(inputs: texts.count, tokens: total) }) {
            // Cut before sending: the provider refused a request of this size before.
            counters.withLock { $0.splits += 1 }
            return try await split(texts, tokens: tokens)
        }
        let request = try dialect.request(for: Array(texts), configuration: configuration)
        if texts.count > 1, request.body.count > l.maxRequestBytes {
            return try await split(texts, tokens: tokens)
        }

        let batch = texts.count
        let sent: Sent = try await call.run(
            cost: total,
            onRetry: { counters.withLock { $0.retries += 1 } },
            transportFailed: { SluiceError(.embeddingFailed, scrub("\($0)"), cause: $0) },
            gaveUp: {
                // Could not connect at the last attempt: an unavailability (`search`, `eval` and the promote
                // gate exit 6 for it, `serve` answers 503), as a run's start check says.
                SluiceError(
                    .embeddingFailed,
                    "gave up after \($0.attempts) attempts\($0.rateLimited ? " (rate limited)" : "") for a batch of \(batch): \(scrub($0.reason))",
                    cause: $0.unreachable ? SluiceError(.network, "the embedder could not be reached") : nil
                )
            },
            attempt: {
                counters.withLock { $0.requests += 1 }
                let response = try await client.send(request)
                return dialect.classify(response, batchSize: batch).outcome(
                    of: response,
                    answer: .answer(response),
                    tooLarge: { .finished(.tooLarge($0), headers: response.headers, counted: false) },
                    refused: {
                        SluiceError(.providerRefused, "\(configuration.provider) refused to go on: \(scrub($0))")
                    },
                    invalid: { SluiceError(.embeddingFailed, scrub($0)) },
                    rateLimited: { counters.withLock { $0.rateLimited += 1 } }
                )
            }
        )
        switch sent {
        case .answer(let response):
            let vectors = try dialect.vectors(from: response, count: batch)
            counters.withLock { $0.tokens += total }
            return vectors
        case .tooLarge(let reason):
            counters.withLock { $0.splits += 1 }
            sizeLimit.withLock {
                $0.refused(inputs: batch, tokens: total, providerLimit: requestSizeLimit(in: reason))
            }
            return try await split(texts, tokens: tokens)
        }
    }

    /// What one batch's request came to: a 2xx answer, or a refusal for its size (the batch is split).
    private enum Sent: Sendable {
        case answer(HTTPResponse)
        case tooLarge(String)
    }

    /// Whether the endpoint answers at all: a `GET` of the base URL, where any HTTP status (a 404, a 401)
    /// counts as reachable. Connection refused or reset, DNS failures and timeouts are tried three times,
    /// a short pause apart, then reported as ``SluiceError/Code/dependencyUnavailable``. No embedding is
    /// requested and nothing is counted against the budget; a 5xx storm later in a run is handled by the
    /// retries of ``embed(_:tokenCounts:)`` as before.
    public func checkReachable() async throws {
        try await probeReachable(
            configuration.baseURL,
            what: "embedder \(configuration.provider)",
            client: client,
            timeout: configuration.http.connectTimeout + .seconds(5),
            scrub: scrub
        )
    }

    /// Embeds the two halves of a batch concurrently.
    private func split(_ texts: ArraySlice<String>, tokens: ArraySlice<Int>) async throws -> [[Float]] {
        let middle = texts.startIndex + texts.count / 2
        async let first = send(texts[..<middle], tokens: tokens[..<middle])
        let second = try await send(texts[middle...], tokens: tokens[middle...])
        return try await first + second
    }

    /// A provider message without the key (some providers echo part of it: "Incorrect API key provided: sk-ab***yz").
    func scrub(_ message: String) -> String {
        EnvironmentSecret.redacting(configuration.apiKey, in: message)
    }
}
