import Foundation
import SluiceCore
import SluiceEmbed
import SluiceHTTP

/// The second stage of a search (`search.rerank`): the first stage's best ``topN`` results re-scored by a
/// ``Reranker`` and put in its order, within a deadline. Past the deadline, or when the reranker fails
/// (down, refusing, answering nonsense), the first stage's order is kept and the ``RerankStatus`` says why:
/// a search never fails because of its reranker.
public struct SearchReranking: Sendable {
    public var reranker: any Reranker
    /// How many first-stage results are re-scored (at least the query's k).
    public var topN: Int
    /// How long the reranker may take, its retries and rate-limit waits included.
    public var deadline: Duration

    public init(reranker: any Reranker, topN: Int = 50, deadline: Duration = .seconds(5)) {
        self.reranker = reranker
        self.topN = max(1, topN)
        self.deadline = deadline
    }

    /// The reranker `search.rerank` describes, or nil when the pipeline names none.
    /// - Throws: ``SluiceError/Code/configuration`` for an unset key variable or a bad URL.
    public init?(
        configuration: PipelineConfiguration,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws {
        let settings = configuration.search.rerank
        guard let url = settings.url else { return nil }
        var remote = RemoteRerankerConfiguration(kind: settings.kind, url: url, model: settings.model)
        remote.apiKey = try EnvironmentSecret.value(
            of: settings.apiKeyEnv,
            key: "search.rerank.api_key_env",
            need: .ifNamed,
            environment: environment
        )
        remote.maxDocumentsPerRequest = settings.documentsPerRequest
        remote.maxDocumentCharacters = settings.maxDocumentCharacters
        remote.maxConcurrency = settings.parallelism
        remote.requestsPerMinute = settings.requestsPerMinute
        remote.maxRetries = settings.maxRetries
        remote.maxRetryAfter = .milliseconds(Int64(settings.maxRetryAfterSeconds * 1000))
        remote.http.caBundlePath = settings.caBundle.map { configuration.resolve($0).path }
        // A request never outlives the deadline by much: the deadline abandons it first.
        remote.http.timeout = .milliseconds(Int64(settings.deadlineSeconds * 1000) + 1000)
        self.init(
            reranker: try RemoteReranker(configuration: remote),
            topN: settings.topN,
            deadline: .milliseconds(Int64(settings.deadlineSeconds * 1000))
        )
    }

    /// `results` (the first stage's, best first) in the reranker's order, each with its
    /// ``SearchResult/rerankScore``, cut to `k`; or, when the reranker did not answer in time or failed,
    /// the first `k` in their order.
    /// - Throws: only `CancellationError` and ``SluiceError/Code/interrupted`` (the caller is stopping).
    func rerank(query: String, results: [SearchResult], k: Int) async throws -> ([SearchResult], RerankStatus) {
        let model = reranker.model
        guard !results.isEmpty else { return ([], RerankStatus(model: model, applied: true)) }
        let reranker = self.reranker
        let texts = results.map(\.text)
        let scores: [Double]
        do {
            scores = try await withDeadline(
                deadline,
                what: "the reranker",
                setting: "search.rerank.deadline_seconds"
            ) { try await reranker.scores(query: query, documents: texts) }
        } catch let error as SluiceError where error.code == .interrupted {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            let reason =
                (error as? SluiceError)?.code == .timeout
                ? "the reranker did not answer within \(deadline.seconds) s (search.rerank.deadline_seconds): first-stage order"
                : "the reranker failed: \((error as? SluiceError)?.message ?? "\(error)"): first-stage order"
            return (Array(results.prefix(k)), RerankStatus(model: model, applied: false, reason: reason))
        }
        guard scores.count == results.count, scores.allSatisfy(\.isFinite) else {
            let reason = "the reranker gave \(scores.count) scores for \(results.count) passages: first-stage order"
            return (Array(results.prefix(k)), RerankStatus(model: model, applied: false, reason: reason))
        }
        // Stable: equal scores keep the first stage's order.
        let order = results.indices.sorted { a, b in scores[a] != scores[b] ? scores[a] > scores[b] : a < b }
        let reranked = order.prefix(k).map { index in
            var result = results[index]
            result.rerankScore = scores[index]
            return result
        }
        return (reranked, RerankStatus(model: model, applied: true))
    }
}

extension Searcher {
    /// The results of ``search(_:)`` (the first stage), then, when the searcher has a ``reranking`` and
    /// the query does not skip it (``SearchQuery/rerank``), the second stage over the first stage's best
    /// ``SearchReranking/topN`` (at least k): the results in the reranker's order, and what it did.
    public func searchOutcome(_ query: SearchQuery) async throws -> SearchOutcome {
        guard let reranking else { return SearchOutcome(results: try await search(query), rerank: nil) }
        guard (1...SearchQuery.maxK).contains(query.k) else {
            throw SluiceError(.usage, "k must be between 1 and \(SearchQuery.maxK), not \(query.k)")
        }
        guard query.rerank else {
            return SearchOutcome(
                results: try await search(query),
                rerank: RerankStatus(
                    model: reranking.reranker.model,
                    applied: false,
                    reason: "skipped: the query asked for the first stage's order"
                )
            )
        }
        var wide = query
        wide.k = min(SearchQuery.maxK, max(query.k, reranking.topN))
        let firstStage = try await search(wide)
        let text = query.text.trimmingCharacters(in: .whitespacesAndNewlines)
        let (results, status) = try await reranking.rerank(query: text, results: firstStage, k: query.k)
        return SearchOutcome(results: results, rerank: status)
    }
}
