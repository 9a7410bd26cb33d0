/// How a search ranks: by vector similarity, by keywords, or both fused.
public enum SearchMode: String, Sendable, Hashable, CaseIterable, Codable {
    /// Nearest vectors by the store's metric (cosine unless configured otherwise).
    case vector
    /// Keyword ranking (BM25 or the store's full-text ranking) of the query's words.
    case keyword
    /// Vector and keyword rankings fused into one (``SearchFusion``: by their scores, or by reciprocal rank).
    case hybrid
}

/// One ranking asked of a store: a vector or keyword top-k, narrowed by a filter the store applies itself.
///
/// Stores answer ``SearchMode/vector`` and, where ``VectorSink/searchModes`` says so,
/// ``SearchMode/keyword``; `hybrid` is fused above the store from the two.
public struct SearchRequest: Sendable, Hashable {
    public var mode: SearchMode
    /// The query's embedding (vector mode).
    public var vector: [Float]
    /// The query's text (keyword mode).
    public var text: String
    public var k: Int
    /// Applied by the store while it ranks, never after its top-k.
    public var filter: SearchFilter?

    public init(
        mode: SearchMode = .vector,
        vector: [Float] = [],
        text: String = "",
        k: Int,
        filter: SearchFilter? = nil
    ) {
        self.mode = mode
        self.vector = vector
        self.text = text
        self.k = k
        self.filter = filter
    }
}
