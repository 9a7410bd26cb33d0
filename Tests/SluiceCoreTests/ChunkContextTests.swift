import Foundation
import SluiceTesting
import Testing

@testable import SluiceCore

/// `chunk.context`: the prefix the embedder sees before a chunk's text, within its token budget.
@Suite struct ChunkContextTests {
    /// Counts whitespace-separated words, as the test embedders do: the budget is then easy to reason about.
    private func context(_ setting: PipelineConfiguration.Chunk.Context, window: Int = 256) -> ChunkContext {
        ChunkContext(setting, counter: WhitespaceTokenCounter(), maxInputTokens: window)
    }

    @Test func theHeadingPathFollowsTheTitleAndABlankLineEndsIt() {
        let prefix = context(.headings).prefix(title: "XZ Utils FAQ", headings: ["Usage", "Recovery"], chunkTokens: 10)
        #expect(prefix.text == "XZ Utils FAQ › Usage › Recovery\n\n")
        #expect(prefix.tokens == WhitespaceTokenCounter().count(prefix.text))
    }

    @Test func titleAloneLeavesTheHeadingsOutAndNoneIsEmpty() {
        #expect(context(.title).prefix(title: "Manual", headings: ["A", "B"], chunkTokens: 10).text == "Manual\n\n")
        #expect(context(.none).prefix(title: "Manual", headings: ["A", "B"], chunkTokens: 10) == ("", 0))
    }

    /// A document without a title or headings gets no prefix: its input is the chunk's text, as without the
    /// setting (so the cache key stays the text's).
    @Test func noTitleAndNoHeadingsGiveNoPrefix() {
        #expect(context(.headings).prefix(title: nil, headings: [], chunkTokens: 10) == ("", 0))
        #expect(context(.headings).prefix(title: "  \n ", headings: ["", " "], chunkTokens: 10) == ("", 0))
        #expect(context(.title).prefix(title: nil, headings: ["Only a heading"], chunkTokens: 10) == ("", 0))
        #expect(
            context(.headings).prefix(title: nil, headings: ["Only a heading"], chunkTokens: 10).text
                == "Only a heading\n\n"
        )
    }

    /// White space inside a part is folded, and a part equal to the one before it (a Markdown title that is
    /// also the first heading) is said once.
    @Test func partsAreNormalizedAndNotRepeated() {
        let parts = context(.headings).parts(title: "Guide", headings: ["Guide", "Install\n  on   Linux", "Guide"])
        #expect(parts == ["Guide", "Install on Linux", "Guide"])
        #expect(context(.headings).parts(title: "Guide", headings: ["Guide", "Guide"]) == ["Guide"])
    }

    /// A long heading path loses its outer headings first, keeping the title and the innermost heading,
    /// then the title; the prefix never exceeds the reserve.
    @Test func aLongHeadingPathLosesItsOuterHeadingsFirst() {
        let headings = (1...20).map { "Level \($0) heading" }  // three words each
        let prefix = context(.headings).prefix(title: "The Title", headings: headings, chunkTokens: 10)
        #expect(prefix.tokens <= ChunkContext.reservedTokens)
        #expect(prefix.text.hasPrefix("The Title › "))
        #expect(prefix.text.hasSuffix("Level 20 heading\n\n"))
        #expect(!prefix.text.contains("Level 1 heading"))
        // Kept parts are the innermost ones, in order.
        let kept = prefix.text.dropLast(2).components(separatedBy: " › ").dropFirst()
        #expect(Array(kept) == headings.suffix(kept.count))
    }

    /// The chunk fills most of the window: the prefix takes only the room left, so the input always fits.
    @Test(arguments: [0, 1, 3, 5, 8, 20, 40])
    func thePrefixFitsTheRoomTheChunkLeaves(room: Int) {
        let window = 100
        let prefix = context(.headings, window: window).prefix(
            title: "A rather long document title",
            headings: ["Chapter one of many", "Section two"],
            chunkTokens: window - room
        )
        #expect(prefix.tokens <= room)
        #expect(prefix.tokens <= ChunkContext.reservedTokens)
        if room == 0 { #expect(prefix == ("", 0)) }
        if room >= 3 { #expect(!prefix.text.isEmpty) }
        #expect(prefix.tokens == WhitespaceTokenCounter().count(prefix.text))
    }

    /// One part longer than the budget is cut by words from its end; a heading of a million words costs
    /// no more than its first words.
    @Test func aSinglePartOverTheBudgetIsCutByWords() {
        let huge = Array(repeating: "word", count: 1_000_000).joined(separator: " ")
        let prefix = context(.headings).prefix(title: nil, headings: [huge], chunkTokens: 10)
        #expect(prefix.tokens == ChunkContext.reservedTokens)
        #expect(prefix.text.hasPrefix("word word"))
        let tight = context(.headings, window: 14).prefix(
            title: "one two three four five",
            headings: [],
            chunkTokens: 10
        )
        #expect(tight.text == "one two three four\n\n")
    }

    /// The chunker leaves room for the prefix when the window is tight, and nothing changes without it.
    @Test func theChunkBudgetLeavesRoomForThePrefix() {
        #expect(ChunkContext.chunkBudget(maxTokens: 256, maxInputTokens: 254, context: .none) == 254)
        #expect(ChunkContext.chunkBudget(maxTokens: 256, maxInputTokens: 254, context: .headings) == 222)
        #expect(ChunkContext.chunkBudget(maxTokens: 256, maxInputTokens: 8192, context: .headings) == 256)
        #expect(ChunkContext.chunkBudget(maxTokens: 200, maxInputTokens: 254, context: .title) == 200)
        // A tiny window keeps half of itself for the chunk.
        #expect(ChunkContext.chunkBudget(maxTokens: 256, maxInputTokens: 40, context: .headings) == 20)
    }
}
