/// `POST /v1/search`'s body (docs/openapi.json, `SearchRequest`).
public struct SearchRequest: Sendable, Hashable, Codable {
    public var query: String
    public var k: Int?
    /// The JSON filter form: `["format": "pdf", "page": ["$gte": 3]]`.
    public var filter: JSONValue?
    /// `vector`, `keyword` or `hybrid`; nil: the server's default for its store.
    public var mode: String?
    /// How hybrid merges its rankings: `score` or `rrf`; nil: the server's `search.fusion`.
    public var fusion: String?
    public var minScore: Double?
    /// Collapse copies of one text into one result (default true).
    public var collapse: Bool?
    /// false: the server's reranker (`search.rerank`) is skipped (the first stage's order); nil: it is used.
    public var rerank: Bool?

    public init(
        query: String,
        k: Int? = nil,
        filter: JSONValue? = nil,
        mode: String? = nil,
        minScore: Double? = nil,
        collapse: Bool? = nil,
        rerank: Bool? = nil,
        fusion: String? = nil
    ) {
        self.query = query
        self.k = k
        self.filter = filter
        self.mode = mode
        self.minScore = minScore
        self.collapse = collapse
        self.rerank = rerank
        self.fusion = fusion
    }

    enum CodingKeys: String, CodingKey {
        case query, k, filter, mode, fusion, collapse, rerank
        case minScore = "min_score"
    }
}
