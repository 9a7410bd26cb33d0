/// What an answer's citations hold up to, checked against the passages it was given: which passages it
/// cites and in what order, the numbers it makes up, and the quotations that are in none of the passages
/// they cite.
///
/// ``Answerer`` reports it once the answer is complete (``AnswerEvent/checked(_:)``). With
/// `answer.require_citations` (the default) an answer that cites no passage is not passed off as one: its
/// text is not streamed, it is kept in ``withheldAnswer``, and the answer is "not in the sources".
public struct AnswerCheck: Sendable, Hashable {
    /// The numbers of the passages the answer cites, in the order it first cites them.
    public var cited: [Int]
    /// Numbers in the answer's `[n]` markers that name no passage (0, or above the passages sent): made up.
    public var unknownCitations: [Int]
    /// Quotations (three words or more in double quotes) in none of the passages they cite.
    public var unsupportedQuotes: [Quote]
    /// The model's text when it cited no passage and `answer.require_citations` held it back; nil otherwise.
    public var withheldAnswer: String?

    /// A quotation of the answer that its passages do not hold.
    public struct Quote: Sendable, Hashable {
        /// The quoted words, as the answer has them.
        public var text: String
        /// The passages the answer cites for it (empty: it cites none, and none of the passages holds it).
        public var cited: [Int]

        public init(text: String, cited: [Int]) {
            self.text = text
            self.cited = cited
        }
    }

    public init(cited: [Int], unknownCitations: [Int], unsupportedQuotes: [Quote], withheldAnswer: String? = nil) {
        self.cited = cited
        self.unknownCitations = unknownCitations
        self.unsupportedQuotes = unsupportedQuotes
        self.withheldAnswer = withheldAnswer
    }

    /// True when the answer cites at least one of its passages.
    public var isGrounded: Bool { !cited.isEmpty }

    /// Checks `answer` against `sources` (the passages of its prompt, numbered as there).
    public init(answer: String, sources: [AnswerSource]) {
        let markers = AnswerCitations.markers(in: answer)
        let numbers = Set(sources.map(\.number))
        var cited: [Int] = []
        var unknown: [Int] = []
        for number in markers.flatMap(\.numbers) {
            if numbers.contains(number) {
                if !cited.contains(number) { cited.append(number) }
            } else if !unknown.contains(number) {
                unknown.append(number)
            }
        }
        let texts = Dictionary(sources.map { ($0.number, $0.text) }, uniquingKeysWith: { first, _ in first })
        let quotes = AnswerQuotation.all(in: answer).compactMap { quotation -> Quote? in
            let known = quotation.cited.filter { texts[$0] != nil }
            let passages = quotation.cited.isEmpty ? Array(texts.values) : known.compactMap { texts[$0] }
            guard !passages.contains(where: quotation.isQuoted(from:)) else { return nil }
            return Quote(text: quotation.text, cited: quotation.cited)
        }
        self.init(cited: cited, unknownCitations: unknown, unsupportedQuotes: quotes)
    }

    /// `sources` in the order the answer used them: the cited ones in the order of their first citation,
    /// then the others by number.
    public func ordered(_ sources: [AnswerSource]) -> [AnswerSource] {
        let position = Dictionary(cited.enumerated().map { ($0.element, $0.offset) }, uniquingKeysWith: min)
        return sources.sorted { a, b in
            switch (position[a.number], position[b.number]) {
            case let (x?, y?): x < y
            case (.some, nil): true
            case (nil, .some): false
            case (nil, nil): a.number < b.number
            }
        }
    }
}
