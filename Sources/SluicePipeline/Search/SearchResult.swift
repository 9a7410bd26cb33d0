import SluiceCore

/// One result of ``Searcher/search(_:)``, with the same field names in the CLI's JSON, `export` and the
/// HTTP API (docs/USAGE.md, "Search results").
public struct SearchResult: Sendable, Hashable, Codable {
    public var id: VectorID
    /// The first stage's score: cosine similarity (vector), BM25 (keyword) or the fused score (hybrid: 0…1
    /// with `score` fusion, Σ 1/(k + rank) with `rrf`; ``SearchFusion``); a reranker's is ``rerankScore``.
    public var score: Double
    /// Cosine similarity to the query, when a vector ranking saw the record.
    public var vectorScore: Double?
    /// The keyword ranking's score, when it found the record.
    public var keywordScore: Double?
    public var documentKey: String
    public var ordinal: Int
    public var page: Int?
    /// Headings above the passage, outermost first.
    public var headings: [String]
    public var title: String?
    public var text: String
    /// The part of the text around the query's words (about 240 characters).
    public var snippet: String
    public var metadata: [String: MetadataValue]
    /// Other records that hold the same text (copies of one passage collapse into one result).
    public var duplicates: [Location]
    /// The reranker's score (`search.rerank`), when it re-scored the result: the results are then in its
    /// order. Scores are the server's (a cross-encoder's relevance, comparable within one query).
    public var rerankScore: Double? = nil

    /// Where else a collapsed text is stored.
    public struct Location: Sendable, Hashable, Codable {
        public var id: VectorID
        public var documentKey: String
        public var page: Int?

        enum CodingKeys: String, CodingKey {
            case id, page
            case documentKey = "document_key"
        }
    }

    enum CodingKeys: String, CodingKey {
        case id, score, ordinal, page, headings, title, text, snippet, metadata, duplicates
        case vectorScore = "vector_score"
        case keywordScore = "keyword_score"
        case documentKey = "document_key"
        case rerankScore = "rerank_score"
    }
}
