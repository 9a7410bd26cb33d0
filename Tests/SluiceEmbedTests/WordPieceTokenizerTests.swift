import Foundation
import SluiceCore
import Testing

@testable import SluiceEmbed

/// Token ids against the Hugging Face fast tokenizer (`scripts/reference/wordpiece_fixture.py`): hand-written
/// edge cases, real paragraphs and a sweep over every BMP code point and the supplementary blocks that
/// matter (emoji, CJK extensions, tags, private use).
@Suite struct WordPieceTokenizerTests {
    @Test func idsEqualTheFastTokenizerOnTheParityFixture() throws {
        let tokenizer = try MiniLMFixtures.loadEmbedder().tokenizer
        let cases = try MiniLMFixtures.lines("wordpiece-parity.jsonl")
        #expect(cases.count > 1500)
        var mismatches = 0
        for entry in cases {
            let text = try #require(entry["text"] as? String)
            let expected = try #require(entry["ids"] as? String).split(separator: " ").map { Int32($0)! }
            let ids = tokenizer.encode(text)
            if ids != expected {
                mismatches += 1
                if mismatches <= 10 {
                    Issue.record(
                        "ids differ for \(text.debugDescription.prefix(200)):\n  got      \(ids.prefix(40))\n  expected \(expected.prefix(40))"
                    )
                }
            }
        }
        #expect(mismatches == 0, "\(mismatches) of \(cases.count) texts tokenize differently")
    }

    @Test func framesAndTruncatesToTheWindow() throws {
        let tokenizer = try MiniLMFixtures.loadEmbedder().tokenizer
        #expect(tokenizer.maxSequenceLength == 256)
        #expect(tokenizer.encode("") == [101, 102])
        let long = String(repeating: "word ", count: 1000)
        let ids = tokenizer.encode(long)
        #expect(ids.count == 256)
        #expect(ids.first == 101 && ids.last == 102)
        #expect(tokenizer.count(long) == 1000)
        #expect(tokenizer.count("") == 0)
        #expect(tokenizer.count("Hello, world!") == 4)
    }

    @Test func countIsTheNumberOfWordPieces() throws {
        let tokenizer = try MiniLMFixtures.loadEmbedder().tokenizer
        for text in ["antidisestablishmentarianism", "東京は日本の首都です。", "x86_64 arm64-v8a", "[SEP] a [CLS]"] {
            #expect(tokenizer.count(text) == tokenizer.encode(text).count - 2)
        }
    }

    @Test func rejectsAVocabularyWithoutSpecialTokens() {
        #expect(throws: SluiceError.self) { try WordPieceTokenizer(vocabulary: "a\nb\n", maxSequenceLength: 8) }
        #expect(throws: SluiceError.self) {
            try WordPieceTokenizer(vocabulary: "[CLS]\n[SEP]\n[CLS]\n", maxSequenceLength: 8)
        }
    }
}
