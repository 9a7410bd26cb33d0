import SluiceChunk
import SluiceCore
import Testing

/// Huge inputs must be chunked in linear time. The work is measured by the bytes handed to the token
/// counter, not by a clock (the machines are noisy): a quadratic path would count the text over and over.
@Suite(.serialized) struct RecursiveChunkerLargeInputTests {
    static let size = 5_000_000

    enum Shape: String, CaseIterable, CustomTestStringConvertible, Sendable {
        /// Letters and digits only: one endless word.
        case oneWord
        /// No white space, but punctuation everywhere: millions of one-character tokens.
        case punctuation
        /// A single line of words with no sentence ends.
        case lineOfWords
        /// A single line of sentences.
        case lineOfSentences

        var testDescription: String { rawValue }

        var unit: String {
            switch self {
            case .oneWord: "abcdefghijklmnopqrstuvwxyz0123456789"
            case .punctuation: "lorem,ipsum;dolor:sit(amet)-"
            case .lineOfWords: "lorem ipsum dolor sit amet consectetur adipiscing elit "
            case .lineOfSentences: "Lorem ipsum dolor sit amet. Consectetur adipiscing elit? "
            }
        }

        var text: String { String(repeating: unit, count: RecursiveChunkerLargeInputTests.size / unit.utf8.count) }
    }

    @Test(arguments: Shape.allCases)
    func fiveMegabytesInLinearTime(shape: Shape) {
        let text = shape.text
        let counter = MeteredCounter(WordTokenCounter())
        let chunker = RecursiveChunker(maxTokens: 256, overlapTokens: 32, counter: counter)
        let document = ExtractedText(sections: [TextSection(text: text)])
        let chunks = chunker.chunk(document)
        let passes = Double(counter.bytesCounted) / Double(text.utf8.count)
        #expect(passes < 8, "the chunker counted the 5 MB text \(passes) times over")
        #expect(chunks.count > 100)
        #expect(chunks.allSatisfy { $0.tokenCount <= 256 && !$0.text.isEmpty })
        // Nothing but spaces between and after the chunks (the inputs are ASCII).
        let bytes = Array(text.utf8)
        var end = 0
        for chunk in chunks {
            if chunk.startOffset > end {
                #expect(bytes[end..<chunk.startOffset].allSatisfy { $0 == 0x20 }, "text lost at \(end)")
            }
            end = max(end, chunk.startOffset + chunk.text.utf8.count)
        }
        #expect(bytes[end...].allSatisfy { $0 == 0x20 })
    }

    @Test func aHugeWordIsCutIntoWindowsThatFit() {
        let text = Shape.oneWord.text
        let counter = WordTokenCounter()
        let chunks = RecursiveChunker(maxTokens: 100, overlapTokens: 0, counter: counter)
            .chunk(ExtractedText(sections: [TextSection(text: text)]))
        #expect(chunks.map(\.text).joined() == text)
        #expect(chunks.allSatisfy { $0.tokenCount <= 100 && counter.count($0.text) == $0.tokenCount })
        // Windows are filled, not cut at a fraction of the budget.
        #expect(chunks.dropLast().allSatisfy { $0.tokenCount >= 90 })
    }
}
