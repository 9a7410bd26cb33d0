import Foundation
import SluiceCore
import SluiceHTTP
import Synchronization

/// A cross-encoder behind a `/rerank` API: Hugging Face TEI, Cohere, Jina, vLLM
/// (``PipelineConfiguration/Search/Rerank/Kind``).
///
/// It goes through the machinery of the remote embedders: one `RateBudget` (requests per minute, paused
/// as a whole by a 429's `Retry-After`), one `AdaptiveConcurrency` limit, the one `RetryPolicy` carried
/// out by a `RetryStateMachine` per request, the libcurl client. The documents of one call are cut to
/// `maxDocumentCharacters` characters and sent `maxDocumentsPerRequest` at a time, the requests in
/// parallel; a server that answers "too large" (413, a 400 about size) has the batch split in halves, and
/// the smaller size is kept for later calls. 401/403 refuse every later call at once, without a request.
/// The key travels in a header only and is scrubbed from every message.
public final class RemoteReranker: Reranker {
    public let configuration: RemoteRerankerConfiguration
    public var model: String { configuration.model ?? configuration.kind.rawValue }

    private let dialect: RerankDialect
    private let client: HTTPClient
    private let budget: RateBudget<ContinuousClock>
    private let concurrency: AdaptiveConcurrency
    private let policy: RetryPolicy
    private let counters = Mutex(RerankerRequestStats())
    private let refusal = Mutex<SluiceError?>(nil)
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
        budget = RateBudget(requestsPerMinute: configuration.requestsPerMinute, tokensPerMinute: nil)
        concurrency = AdaptiveConcurrency(maximum: max(1, configuration.maxConcurrency))
        policy = configuration.retryPolicy
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
        if let refused = refusal.withLock({ $0 }) { throw refused }
        if documents.count > 1, !sizeLimit.withLock({ $0.admits(inputs: documents.count, tokens: 0) }) {
            return try await split(query: query, documents: documents)
        }
        let request = dialect.request(query: query, documents: Array(documents), configuration: configuration)
        var retry = RetryStateMachine(policy: policy)
        while true {
            try Task.checkCancellation()
            if let refused = refusal.withLock({ $0 }) { throw refused }
            await concurrency.acquire()
            let ticket: RateBudgetStateMachine.Ticket
            do {
                ticket = try await budget.acquire(tokens: 0)
            } catch {
                concurrency.release(.neutral)
                throw error
            }
            counters.withLock { $0.requests += 1 }
            let response: HTTPResponse
            do {
                response = try await client.send(request)
            } catch let error as SluiceError where error.isTransient {
                budget.failed(ticket, counted: error.code == .timeout)
                concurrency.release(error.code == .timeout ? .overloaded : .neutral)
                try await carryOut(retry.failed(.transient(reason: error.description), unit: .random(in: 0..<1)))
                continue
            } catch let error as SluiceError {
                budget.failed(ticket, counted: true)
                concurrency.release(.neutral)
                throw SluiceError(.dependencyUnavailable, "the reranker: \(scrub(error.message))", cause: error)
            } catch {
                budget.failed(ticket, counted: false)
                concurrency.release(.neutral)
                throw error
            }
            let headers = RateLimitSnapshot(response)
            switch dialect.classify(response, batchSize: documents.count) {
            case .success:
                budget.answered(ticket, headers: headers, counted: true)
                concurrency.release(.success)
                return try dialect.scores(from: response, count: documents.count)
            case .tooLarge:
                budget.answered(ticket, headers: headers, counted: false)
                concurrency.release(.neutral)
                counters.withLock { $0.splits += 1 }
                let count = documents.count
                sizeLimit.withLock { $0.refused(inputs: count, tokens: 0, providerLimit: nil) }
                return try await split(query: query, documents: documents)
            case .rateLimited(let reason):
                concurrency.release(.overloaded)
                counters.withLock { $0.rateLimited += 1 }
                let action = retry.failed(
                    .rateLimited(reason: reason, serverWait: response.retryAfter(cap: configuration.maxRetryAfter)),
                    unit: .random(in: 0..<1)
                )
                switch action {
                case .pauseBudget(let pause), .retry(let pause):
                    budget.rateLimited(ticket, headers: headers, pause: pause)
                    counters.withLock { $0.retries += 1 }
                case .giveUp:
                    budget.rateLimited(ticket, headers: headers, pause: .zero)
                    try await carryOut(action)
                }
            case .refused(let reason):
                budget.answered(ticket, headers: headers, counted: false)
                concurrency.release(.neutral)
                let error = SluiceError(.providerRefused, "the reranker refused: \(scrub(reason))")
                refusal.withLock { if $0 == nil { $0 = error } }
                throw error
            case .transient(let reason):
                budget.answered(ticket, headers: headers, counted: false)
                concurrency.release(.neutral)
                let failure = RetryStateMachine.Failure.transient(
                    reason: reason,
                    serverWait: response.retryAfter(cap: configuration.maxRetryAfter)
                )
                try await carryOut(retry.failed(failure, unit: .random(in: 0..<1)))
            case .invalid(let reason):
                budget.answered(ticket, headers: headers, counted: false)
                concurrency.release(.neutral)
                throw SluiceError(
                    .configuration,
                    "the reranker will not take the request (check search.rerank.url, kind and model): \(scrub(reason))"
                )
            }
        }
    }

    /// Waits as the retry machine says, or throws when the retries are spent.
    private func carryOut(_ action: RetryStateMachine.Action) async throws {
        switch action {
        case .retry(let delay), .pauseBudget(let delay):
            counters.withLock { $0.retries += 1 }
            try await ShutdownSignal.pause(for: delay)
        case .giveUp(let giveUp):
            throw SluiceError(.dependencyUnavailable, "the reranker \(scrub(giveUp.description))")
        }
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
