import SluiceCore

/// What a caller asks ``Searcher`` for (the CLI's `search` flags, the HTTP API's body).
public struct SearchQuery: Sendable, Hashable {
    public var text: String
    public var k: Int
    public var filter: SearchFilter?
    /// nil: `hybrid` where the store has keyword search, else `vector`.
    public var mode: SearchMode?
    /// Results whose similarity is below it are left out: cosine similarity in the vector and hybrid
    /// modes, the keyword score in keyword mode.
    public var minScore: Double?
    /// Collapse records with the same text into one result.
    public var collapseDuplicates: Bool
    /// Whether a searcher with a reranker (`search.rerank`) re-scores the results; false: the first
    /// stage's order (`--no-rerank`, `"rerank": false`).
    public var rerank = true
    /// How a hybrid search merges its rankings; nil: the searcher's (`search.fusion`).
    public var fusion: SearchFusion?

    /// The most results one query may ask for.
    public static let maxK = 1000
    /// The longest query, in UTF-8 bytes: a question, not a document (docs/USAGE.md).
    public static let maxBytes = 16_384
    /// The most distinct words a keyword or hybrid query may rank by (each is a posting list to read, or
    /// a term of PostgreSQL's `tsquery`).
    public static let maxKeywordTerms = 256

    public init(
        text: String,
        k: Int = 5,
        filter: SearchFilter? = nil,
        mode: SearchMode? = nil,
        minScore: Double? = nil,
        collapseDuplicates: Bool = true,
        fusion: SearchFusion? = nil
    ) {
        self.text = text
        self.k = k
        self.filter = filter
        self.mode = mode
        self.minScore = minScore
        self.collapseDuplicates = collapseDuplicates
        self.fusion = fusion
    }
}
