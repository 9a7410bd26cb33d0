import Foundation
import SluiceCore
import SluiceTesting
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

    /// The cuts it reports are where counts add up (``AdditiveTokenCounter``): on real texts, the parity texts
    /// and white space BERT drops rather than separates, the count before each cut is the count of the prefix,
    /// the prefix and the rest count the whole, and no cut is reported elsewhere.
    @Test func countsAddUpAtEveryCut() throws {
        let tokenizer = try MiniLMFixtures.loadEmbedder().tokenizer
        let parity = try MiniLMFixtures.lines("wordpiece-parity.jsonl").compactMap { $0["text"] as? String }
        let texts =
            RealTexts.load(prefix: 4_000) + parity.prefix(300)
            + ["a\u{0C} b\u{0B}c \u{85}d\u{3000}e\u{200B} f", "x [CLS] [SEP]y\t\r\n[UNK]z", "東京 は\n\n日本"]
        #expect(texts.count > 300)
        var cutsSeen = 0
        for text in texts {
            var cuts: [(offset: Int, before: Int)] = []
            let total = tokenizer.count(text[...]) { cuts.append(($0, $1)) }
            #expect(total == tokenizer.count(text))
            let utf8 = Array(text.utf8)
            // Every cut is checked on short texts, about 15 on long ones (each check counts the whole text).
            for cut in stride(from: 0, to: cuts.count, by: max(1, cuts.count / 15)).map({ cuts[$0] }) {
                let prefix = String(decoding: utf8[..<cut.offset], as: UTF8.self)
                let rest = String(decoding: utf8[cut.offset...], as: UTF8.self)
                #expect(tokenizer.count(prefix) == cut.before, "\(text.debugDescription.prefix(80)) at \(cut.offset)")
                #expect(cut.before + tokenizer.count(rest) == total)
                let next = rest.unicodeScalars.first!
                #expect(next.properties.isWhitespace && next != "\u{0C}" && next != "\u{0B}" && next != "\u{85}")
            }
            cutsSeen += cuts.count
        }
        #expect(cutsSeen > 1_000)
    }

    @Test func rejectsAVocabularyWithoutSpecialTokens() {
        #expect(throws: SluiceError.self) { try WordPieceTokenizer(vocabulary: "a\nb\n", maxSequenceLength: 8) }
        #expect(throws: SluiceError.self) {
            try WordPieceTokenizer(vocabulary: "[CLS]\n[SEP]\n[CLS]\n", maxSequenceLength: 8)
        }
    }
}
