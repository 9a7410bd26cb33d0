import Foundation
import SluiceChunk
import SluiceCore
import SluiceEmbed
import SluiceTesting
import Testing

/// The chunker's two ways of counting give the same chunks, byte for byte, on a varied corpus: each section
/// counted once through the BPE tokenizers' cuts (``TokenCountIndex``, what the tokenizers prefer), and every
/// part and chunk counted by itself (a plain ``TokenCounter``: the reference, the chunker's rules read
/// literally, by the tokenizer without its table of piece counts: the merge loop for every piece). Texts,
/// UTF-8 offsets, token counts, ordinals, pages, heading paths and metadata are compared, the texts as bytes
/// (`String`'s `==` would accept a canonically equivalent spelling).
@Suite struct RecursiveChunkerCountingEqualityTests {
    /// The samples, Debian's documents, and texts made to reach every corner of the splitter and the merger.
    static let documents: [ExtractedText] = {
        var texts = RealTexts.load()
        let words = ["alpha", "béta", "γάμμα", "дельта", "13", "2026-11-30", "x", "naïve", "don't", "I'll"]
        func prose(_ count: Int, seed: Int) -> String {
            (0..<count).map { words[($0 * 7 + seed) % words.count] + ($0 % 11 == 10 ? "." : "") }
                .joined(separator: " ")
        }
        // A huge paragraph (no line break), and a huge line of one "word" (no white space at all).
        texts.append(prose(6_000, seed: 1))
        texts.append(String(repeating: "abcdefghij0123456789", count: 1_500))
        texts.append(String(repeating: "漢字仮名交じり文", count: 900))
        // CJK prose: sentences end with 。！？ and no space; full-width space; closing brackets after the end.
        texts.append(
            String(repeating: "東京は日本の首都です。「大阪も大きい。」本当ですか？はい！\u{3000}次の文です。\n", count: 120)
        )
        // Emoji: ZWJ sequences, skin tones, flags, keycaps, variation selectors, combining marks.
        texts.append(
            String(repeating: "👩‍👩‍👧‍👦 family 👍🏽 ok 🇫🇷🇩🇪 flags 1️⃣ key ❤️ e\u{301}te\u{301} cafe\u{301}! ", count: 300)
                + String(repeating: "👩‍💻🧑🏿‍🚀", count: 400)
        )
        // Code: indentation, braces, punctuation before line breaks (no cut there), tabs, CRLF.
        texts.append(
            String(
                repeating:
                    "func f(_ x: Int) -> Int {\n    if x > 0 { return x * 2 }\n\treturn -x;\n}\r\n\r\n"
                    + "let table = [\"a\": 1, \"b\": 2]  // comment: (x), [y].\n\n",
                count: 200
            )
        )
        // An indented changelog, as the latency-bound corpus has.
        texts.append(
            String(
                repeating:
                    "pkg (1.2-3) unstable; urgency=medium\n\n  * Fix the thing.\n    - Sub point (Closes: #123456)\n"
                    + "  * Another entry, longer than the others, with words and words and words.\n\n"
                    + " -- Jane Doe <jane@example.org>  Sat, 14 Jan 2023 14:54:50 +0100\n\n",
                count: 150
            )
        )
        // Unusual white space and separators: form feed, U+2029, U+2028, NBSP, vertical tab, CR alone.
        texts.append(
            String(
                repeating: "One.\u{0C}Two\u{2029}three\u{2028}four\u{A0}five\u{0B}six\rseven\n\n\n  \t eight ",
                count: 250
            )
        )
        texts.append(String(repeating: "\n", count: 50) + "  short  " + String(repeating: " ", count: 50))
        // Words that are not single tokens, repeated and not, NUL bytes after punctuation (the table of piece
        // counts keeps them and evicts them).
        texts.append(PieceRichText.make(words: 12_000, seed: 7))
        texts.append("")
        var documents = texts.map { ExtractedText(sections: [TextSection(text: $0)]) }
        // Several sections with pages, heading paths and metadata, in one document.
        documents.append(
            ExtractedText(
                sections: texts.prefix(6).enumerated().map { index, text in
                    TextSection(
                        text: text,
                        page: index % 2 == 0 ? index + 1 : nil,
                        headingPath: index % 3 == 0 ? [] : ["Part \(index)", "Section é"],
                        metadata: index % 2 == 0 ? ["sheet": "S\(index)"] : [:]
                    )
                }
            )
        )
        return documents
    }()

    /// The tokenizers: with the default tables of piece counts, and with tables of 16 slots (a slot changes
    /// hands all the time), made once (each has a thread-specific key).
    static let tokenizers: [String: BPETokenizer] = {
        var tokenizers: [String: BPETokenizer] = [:]
        for encoding in BPETokenizer.supportedEncodings {
            guard let tokenizer = try? BPETokenizer.named(encoding) else { continue }
            tokenizers[encoding] = tokenizer
            tokenizers[encoding + "/16"] = tokenizer.withPieceCountTables(bits: 4)
        }
        return tokenizers
    }()

    @Test(
        arguments: BPETokenizer.supportedEncodings.flatMap { [$0, $0 + "/16"] },
        [(256, 32), (64, 8), (7, 3), (200, 0), (33, 32)]
    )
    func countingOnceGivesTheChunksOfCountingEachPart(_ encoding: String, _ budget: (Int, Int)) throws {
        let tokenizer = try #require(Self.tokenizers[encoding])
        #expect(tokenizer.prefersCountingOnce)
        let once = RecursiveChunker(maxTokens: budget.0, overlapTokens: budget.1, counter: tokenizer)
        let perPart = RecursiveChunker(
            maxTokens: budget.0,
            overlapTokens: budget.1,
            counter: PerPartCounter(base: tokenizer.mergingEveryPiece())
        )
        var compared = 0
        for (index, document) in Self.documents.enumerated() {
            let expected = perPart.chunk(document)
            let actual = once.chunk(document)
            #expect(actual.count == expected.count, "\(encoding) \(budget) document \(index)")
            for (new, old) in zip(actual, expected) {
                let same =
                    Array(new.text.utf8) == Array(old.text.utf8) && new.startOffset == old.startOffset
                    && new.tokenCount == old.tokenCount && new.ordinal == old.ordinal && new.page == old.page
                    && new.headingPath == old.headingPath && new.metadata == old.metadata
                #expect(same, "\(encoding) \(budget) document \(index) chunk \(old.ordinal)")
                if !same { break }
                compared += 1
            }
        }
        #expect(compared > 1_000)
    }
}

/// A counter without the additive path: the chunker counts every part it considers.
private struct PerPartCounter: TokenCounter {
    let base: any TokenCounter
    func count(_ text: Substring) -> Int { base.count(text) }
}
