import SluiceCore

/// One numbered passage of an answer: what its `[n]` markers refer to.
///
/// The JSON field names are those of `sluice search --json`: `id`, `document_key`, `page`, `headings`,
/// `score`, `text`, plus `number` (the n of `[n]`), `truncated` and `cited`.
public struct AnswerSource: Sendable, Hashable, Codable {
    /// The n of the answer's `[n]` markers, from 1, most relevant first.
    public var number: Int
    public var id: String
    public var documentKey: String
    /// The page the passage starts on (PDF, and formats with pages), if known.
    public var page: Int?
    /// The heading path the passage sits under, outermost first.
    public var headings: [String]
    /// The first stage's score (as `search`'s `score`).
    public var score: Double
    /// The reranker's score when it ordered the passages (`search.rerank`), else nil.
    public var rerankScore: Double? = nil
    /// The passage's text (cut at the end when it was the last to fit the budget).
    public var text: String
    /// True when ``text`` was cut to fit `answer.max_context_tokens`.
    public var truncated: Bool
    /// True when the answer cites the passage with a `[n]` marker (set once the answer is complete).
    public var cited: Bool = false

    public init(
        number: Int,
        id: String,
        documentKey: String,
        page: Int?,
        headings: [String],
        score: Double,
        text: String,
        truncated: Bool = false
    ) {
        self.number = number
        self.id = id
        self.documentKey = documentKey
        self.page = page
        self.headings = headings
        self.score = score
        self.text = text
        self.truncated = truncated
    }

    /// The source for a search result (its ranking score, page and heading path).
    init(number: Int, result: SearchResult) {
        self.init(
            number: number,
            id: result.id.rawValue,
            documentKey: result.documentKey,
            page: result.page,
            headings: result.headings,
            score: result.score,
            text: result.text
        )
        rerankScore = result.rerankScore
    }

    enum CodingKeys: String, CodingKey {
        case number, id, page, headings, score, text, truncated, cited
        case documentKey = "document_key"
        case rerankScore = "rerank_score"
    }

    /// Every field, `page` as `null` when unknown (a program reads one shape).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(number, forKey: .number)
        try container.encode(id, forKey: .id)
        try container.encode(documentKey, forKey: .documentKey)
        try container.encode(page, forKey: .page)
        try container.encode(headings, forKey: .headings)
        try container.encode(score, forKey: .score)
        try container.encode(rerankScore, forKey: .rerankScore)
        try container.encode(text, forKey: .text)
        try container.encode(truncated, forKey: .truncated)
        try container.encode(cited, forKey: .cited)
    }

    /// `(document, page 3, Intro > Setup)`: where the passage comes from, as the prompt and the terminal show it.
    public var location: String {
        var parts = [documentKey]
        if let page { parts.append("page \(page)") }
        if !headings.isEmpty { parts.append(headings.joined(separator: " > ")) }
        return parts.joined(separator: ", ")
    }
}
