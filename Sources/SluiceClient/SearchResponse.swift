/// `POST /v1/search`'s answer: the results, best first, the mode that ranked them, and what the
/// reranker did.
public struct SearchResponse: Sendable, Hashable, Codable {
    public var results: [SearchResult]
    public var mode: String
    /// Present when the server's pipeline has a reranker (`search.rerank`).
    public var rerank: RerankInfo?
    /// The records the search skipped because the store could not read them (a damaged local store): the
    /// results are those of the other records. Empty when none; nil when the server did not say (a caller
    /// restricted by access control is never told, or a server older than this field).
    public var skipped: [SkippedRecord]?
}

/// A record a search skipped because the server's store could not read it (docs/openapi.json,
/// `SkippedRecord`): `sluice verify --repair` on the server's pipeline removes it and embeds its document again.
public struct SkippedRecord: Sendable, Hashable, Codable, CustomStringConvertible {
    public var id: String
    /// Nil when the document key could not be read either.
    public var documentKey: String?
    public var reason: String

    /// `id (document key): reason`, for a message to the user.
    public var description: String { "\(id) (\(documentKey ?? "document key unreadable")): \(reason)" }

    enum CodingKeys: String, CodingKey {
        case id, reason
        case documentKey = "document_key"
    }
}

/// Whether the server's reranker ordered the results (docs/openapi.json, `Rerank`): when ``applied`` is
/// false they are in the first stage's order and ``reason`` says why (its deadline passed, it failed, the
/// request skipped it).
public struct RerankInfo: Sendable, Hashable, Codable {
    public var model: String
    public var applied: Bool
    public var reason: String?
}

/// One result (docs/openapi.json, `SearchResult`; the CLI's `search --json` has the same fields).
public struct SearchResult: Sendable, Hashable, Codable {
    public var id: String
    /// The first stage's score.
    public var score: Double
    public var vectorScore: Double?
    public var keywordScore: Double?
    /// The reranker's score, when it ordered the results.
    public var rerankScore: Double?
    public var documentKey: String
    public var ordinal: Int
    public var page: Int?
    public var headings: [String]
    public var title: String?
    public var text: String
    public var snippet: String
    public var metadata: [String: JSONValue]
    public var duplicates: [Location]

    /// Where else a collapsed text is stored.
    public struct Location: Sendable, Hashable, Codable {
        public var id: String
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
