/// Holds an answer's text back until it cites one of its passages (`answer.require_citations`), then lets
/// it through as it comes: an answer that never cites is never streamed. A pure value fed the model's
/// pieces; it reads each piece once (only a marker cut between pieces is read again), so a long answer
/// costs linear time.
struct CitationGate {
    /// The passages of the prompt (a marker must name one of 1...sources).
    let sources: Int
    /// True while no citation has been seen and the gate holds.
    private(set) var isHolding: Bool
    /// The text held back so far.
    private var held = ""
    /// The end of the text read so far from its last `[` when no `]` followed it: a marker may go on in the
    /// next piece.
    private var open = ""

    /// The longest marker looked for across pieces (`[1, 2, 3, 4]`); a longer bracket is no citation.
    static let longestMarker = 64

    init(sources: Int, holding: Bool) {
        self.sources = sources
        self.isHolding = holding
    }

    /// Takes the next piece; returns the text to pass on now (nil: nothing yet).
    mutating func take(_ piece: String) -> String? {
        guard isHolding else { return piece }
        held += piece
        let text = open + piece
        guard AnswerCitations.numbers(in: text, sources: sources).isEmpty else {
            isHolding = false
            defer { held = "" }
            return held
        }
        if let last = text.lastIndex(of: "["), !text[last...].contains("]"),
            text.distance(from: last, to: text.endIndex) <= Self.longestMarker
        {
            open = String(text[last...])
        } else {
            open = ""
        }
        return nil
    }
}
