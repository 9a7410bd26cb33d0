import Foundation
import SluiceCore
import SluiceHTTP
import Synchronization

/// A cross-encoder behind a `/rerank` API: Hugging Face TEI, Cohere, Jina, vLLM
/// (``PipelineConfiguration/Search/Rerank/Kind``).
///
/// It goes through the one request loop (`RemoteCall`) as the remote embedders do: one `RateBudget`
/// (requests per minute, paused as a whole by a 429's `Retry-After`) and one `AdaptiveConcurrency` limit
/// as its gate, the one `RetryPolicy`, the libcurl client. The documents of one call are cut to
/// `maxDocumentCharacters` characters and sent `maxDocumentsPerRequest` at a time, the requests in
/// parallel; a server that answers "too large" (413, a 400 about size) has the batch split in halves, and
/// the smaller size is kept for later calls. 401/403 refuse every later call at once, without a request.
/// The key travels in a header only and is scrubbed from every message.
public final class RemoteReranker: Reranker {
    public let configuration: RemoteRerankerConfiguration
    public var model: String { configuration.model ?? configuration.kind.rawValue }

    private let dialect: RerankDialect
    private let client: HTTPClient
    /// The one request loop, with the rate budget and the concurrency limit as its gate.
    private let call: RemoteCall<BudgetGate, ContinuousClock>
    private let counters = Mutex(RerankerRequestStats())
    private let sizeLimit = Mutex(RequestSizeLimit())

    /// - Throws: ``SluiceError/Code/configuration`` for a URL that is not http(s).
    public convenience init(configuration: RemoteRerankerConfiguration) throws {
        try self.init(configuration: configuration, client: nil)
    }

    /// With a given HTTP client (tests, a shared client).
    package init(configuration: RemoteRerankerConfiguration, client: HTTPClient?) throws {
        guard configuration.url.hasPrefix("http://") || configuration.url.hasPrefix("https://") else {
            throw SluiceError(
                .configuration,
                "search.rerank.url: '\(redactedURL(configuration.url))' is not an http(s) URL"
            )
        }
        self.configuration = configuration
        dialect = RerankDialect(shape: configuration.kind.shape)
        self.client = client ?? HTTPClient(configuration: configuration.http)
        let gate = BudgetGate(
            budget: RateBudget(requestsPerMinute: configuration.requestsPerMinute, tokensPerMinute: nil),
            concurrency: AdaptiveConcurrency(maximum: max(1, configuration.maxConcurrency))
        )
        call = RemoteCall(policy: configuration.retryPolicy, gate: gate)
    }

    /// What the reranker did on the wire since it was made.
    public var requestStats: RerankerRequestStats { counters.withLock { $0 } }

    public func scores(query: String, documents: [String]) async throws -> [Double] {
        guard !documents.isEmpty else { return [] }
        let limit = configuration.maxDocumentCharacters
        let texts = documents.map { $0.count > limit ? String($0.prefix(limit)) : $0 }
        let size = max(1, configuration.maxDocumentsPerRequest)
        let batches = stride(from: 0, to: texts.count, by: size).map { texts[$0..<min($0 + size, texts.count)] }
        return try await withThrowingTaskGroup(of: (Int, [Double]).self) { group in
            for (number, batch) in batches.enumerated() {
                group.addTask { (number, try await self.send(query: query, documents: batch)) }
            }
            var parts = [[Double]](repeating: [], count: batches.count)
            for try await (number, scores) in group { parts[number] = scores }
            return parts.flatMap { $0 }
        }
    }

    /// Sends one batch until it is scored, split, or fails for good.
    private func send(query: String, documents: ArraySlice<String>) async throws -> [Double] {
        try call.checkRefusal()
        if documents.count > 1, !sizeLimit.withLock({ $0.admits(inputs: documents.count, tokens: 0) }) {
            return try await split(query: query, documents: documents)
        }
        let request = dialect.request(query: query, documents: Array(documents), configuration: configuration)
        let batch = documents.count
        let sent: Sent = try await call.run(
            onRetry: { counters.withLock { $0.retries += 1 } },
            transportFailed: {
                SluiceError(.dependencyUnavailable, "the reranker: \(scrub($0.message))", cause: $0)
            },
            gaveUp: { SluiceError(.dependencyUnavailable, "the reranker \(scrub($0.description))") },
            attempt: {
                counters.withLock { $0.requests += 1 }
                let response = try await client.send(request)
                return dialect.classify(response, batchSize: batch).outcome(
                    of: response,
                    answer: .answer(response),
                    tooLarge: { _ in .finished(.tooLarge, headers: response.headers, counted: false) },
                    refused: { SluiceError(.providerRefused, "the reranker refused: \(scrub($0))") },
                    invalid: {
                        SluiceError(
                            .configuration,
                            "the reranker will not take the request (check search.rerank.url, kind and model): \(scrub($0))"
                        )
                    },
                    rateLimited: { counters.withLock { $0.rateLimited += 1 } }
                )
            }
        )
        switch sent {
        case .answer(let response):
            return try dialect.scores(from: response, count: batch)
        case .tooLarge:
            counters.withLock { $0.splits += 1 }
            sizeLimit.withLock { $0.refused(inputs: batch, tokens: 0, providerLimit: nil) }
            return try await split(query: query, documents: documents)
        }
    }

    /// What one batch's request came to: a 2xx answer, or a refusal for its size (the batch is split).
    private enum Sent: Sendable {
        case answer(HTTPResponse)
        case tooLarge
    }

    /// Scores the two halves of a batch concurrently.
    private func split(query: String, documents: ArraySlice<String>) async throws -> [Double] {
        let middle = documents.startIndex + documents.count / 2
        async let first = send(query: query, documents: documents[..<middle])
        let second = try await send(query: query, documents: documents[middle...])
        return try await first + second
    }

    /// A server's message without the key.
    func scrub(_ message: String) -> String {
        EnvironmentSecret.redacting(configuration.apiKey, in: message)
    }
}

/// What a ``RemoteReranker`` did on the wire.
public struct RerankerRequestStats: Sendable, Hashable {
    public var requests = 0
    public var retries = 0
    public var rateLimited = 0
    /// Batches split in halves after a "too large" answer.
    public var splits = 0

    public init() {}
}
