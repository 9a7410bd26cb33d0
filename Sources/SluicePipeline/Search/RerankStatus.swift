/// Whether a search's second stage re-scored its results (`rerank` in `sluice search --json`, the API's
/// search and ask answers): when it did not (its deadline passed, the reranker failed, the query skipped
/// it), the results are in the first stage's order and ``reason`` says why.
public struct RerankStatus: Sendable, Hashable, Codable {
    /// The reranker's model (`search.rerank.model`, else its kind).
    public var model: String
    /// True when the results are in the reranker's order, each with its `rerank_score`.
    public var applied: Bool
    /// Why the reranker's order is not the results' (nil when ``applied``).
    public var reason: String?

    public init(model: String, applied: Bool, reason: String? = nil) {
        self.model = model
        self.applied = applied
        self.reason = reason
    }

    /// Every field, `reason` as `null` when applied (a program reads one shape).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(model, forKey: .model)
        try container.encode(applied, forKey: .applied)
        try container.encode(reason, forKey: .reason)
    }

    enum CodingKeys: String, CodingKey { case model, applied, reason }
}

/// What ``Searcher/searchOutcome(_:)`` found: the results, best first, and what the second stage did.
public struct SearchOutcome: Sendable, Hashable {
    public var results: [SearchResult]
    /// nil when the pipeline has no reranker (`search.rerank`).
    public var rerank: RerankStatus?

    public init(results: [SearchResult], rerank: RerankStatus?) {
        self.results = results
        self.rerank = rerank
    }
}
