import Testing

@testable import SluicePipeline

/// Checking an answer's citations against its passages: made-up numbers, quotations that are not in the
/// passage they cite, and the order the answer used its passages in.
@Suite struct AnswerCheckTests {
    static let sources = [
        "The sluice valve opens at dawn and closes at dusk.",
        "Rain is expected in the afternoon — “heavy” at times.",
        "Keepers log every opening in the ledger, page by page.",
    ].enumerated().map { offset, text in
        AnswerSource(
            number: offset + 1,
            id: "c\(offset)",
            documentKey: "d\(offset).md",
            page: nil,
            headings: [],
            score: 1,
            text: text
        )
    }

    static func check(_ answer: String) -> AnswerCheck { AnswerCheck(answer: answer, sources: sources) }

    @Test func citedInTheOrderOfFirstUseAndMadeUpNumbersListed() {
        let check = Self.check("Rain [2]. Dawn [1][2], and [3, 5]; also [0] and [4-5] and the year [1871].")
        #expect(check.cited == [2, 1, 3])
        #expect(check.unknownCitations == [5, 0, 4])
        #expect(check.isGrounded)
        #expect(Self.check("No citation at all.").cited.isEmpty)
        #expect(!Self.check("Only made up [9].").isGrounded)
    }

    @Test func sourcesAreOrderedByFirstCitationThenByNumber() {
        let check = Self.check("Ledger [3], then rain [2].")
        #expect(check.ordered(Self.sources).map(\.number) == [3, 2, 1])
        #expect(Self.check("Nothing.").ordered(Self.sources).map(\.number) == [1, 2, 3])
    }

    @Test(arguments: [
        // Verbatim, with another case, other spaces and a closing full stop.
        (#"It says "The sluice valve  opens at dawn." [1]"#, []),
        // Typographic quotes and dashes fold; the passage's “heavy” matches a straight quote.
        (#"“Rain is expected in the afternoon - "heavy" at times” [2]."#, []),
        // Words left out with an ellipsis: each part, in order.
        (#""opens at dawn ... at dusk" [1]"#, []),
        (#""at dusk … opens at dawn" [1]"#, ["at dusk … opens at dawn"]),
        // In a passage, but not the one cited.
        (#""every opening in the ledger" [1]"#, ["every opening in the ledger"]),
        // Cited by a marker before it in its sentence.
        (#"As [3] puts it, "every opening in the ledger"."#, []),
        (#"As [2] puts it, "every opening in the ledger"."#, ["every opening in the ledger"]),
        // The first marker after it in its sentence, not a later one.
        (#""closes at dusk" is what the guide says [1], unlike [2]."#, []),
        // A marker in the next sentence does not cite it; uncited, it must be in some passage.
        (#""log every opening" is said. Rain [2]."#, []),
        (#""the valve never closes" is said. Rain [2]."#, ["the valve never closes"]),
        // Made up text cited by a made-up number.
        (#""opens at noon sharp" [7]"#, ["opens at noon sharp"]),
        // Two words are a name or a term, not a quotation.
        (#"The "noon valve" [1]."#, []),
    ])
    func quotationsMustBeInTheirPassage(answer: String, unsupported: [String]) {
        #expect(Self.check(answer).unsupportedQuotes.map(\.text) == unsupported)
    }

    @Test func anUnsupportedQuoteNamesTheMarkersThatCiteIt() {
        let check = Self.check(#"It says "the valve opens at noon" [1][3] and rain [2]."#)
        #expect(check.unsupportedQuotes == [AnswerCheck.Quote(text: "the valve opens at noon", cited: [1, 3])])
    }
}

/// Holding an answer back until it cites a passage.
@Suite struct CitationGateTests {
    @Test func textIsHeldUntilTheFirstCitationThenPassesAsItComes() {
        var gate = CitationGate(sources: 3, holding: true)
        #expect(gate.take("The valve opens ") == nil)
        #expect(gate.take("at dawn [") == nil)
        #expect(gate.take("1") == nil)
        #expect(gate.take("]. More") == "The valve opens at dawn [1]. More")
        #expect(!gate.isHolding)
        #expect(gate.take(" text.") == " text.")
    }

    @Test func aMadeUpNumberOrAYearIsNoCitation() {
        var gate = CitationGate(sources: 2, holding: true)
        #expect(gate.take("Built in [1871], see [3] and [0].") == nil)
        #expect(gate.isHolding)
    }

    @Test func notHoldingPassesEveryPiece() {
        var gate = CitationGate(sources: 2, holding: false)
        #expect(gate.take("Uncited.") == "Uncited.")
        #expect(!gate.isHolding)
    }

    @Test func aLongAnswerIsReadOnce() {
        // A hostile answer of many pieces with an unclosed bracket in each: the gate keeps only a short tail.
        var gate = CitationGate(sources: 2, holding: true)
        for _ in 0..<20_000 { #expect(gate.take("words and [ more words ") == nil) }
        #expect(gate.take("[2]") != nil)
    }
}
