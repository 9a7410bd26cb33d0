import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// The keyword tokenizer's single pass over the bytes (`KeywordTokenizer+Bytes.swift`) gives every term the
/// tokenizer gave before it (``ReferenceKeywordTokenizer``, kept verbatim), byte for byte and in order: on
/// the repository's samples and on random text of every kind of character the tokenizer meets. The index's
/// bytes and search results depend on the terms, so not one may change.
@Suite struct KeywordTokenizerEqualityTests {
    /// Each way of reading a text's terms, new against the reference: the terms as bytes, as strings, and
    /// as the keyword index counts them.
    static func expectSameTerms(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        var terms: [[UInt8]] = []
        var flags: [Bool] = []
        KeywordTokenizer.forEachTermNotingASCII(of: text) { term, ascii in
            terms.append(Array(term))
            flags.append(ascii)
        }
        var reference: [[UInt8]] = []
        ReferenceKeywordTokenizer.forEachTerm(of: text) { reference.append(Array($0)) }
        #expect(terms == reference, "\(text.debugDescription)", sourceLocation: sourceLocation)
        #expect(flags == terms.map { $0.allSatisfy { $0 < 0x80 } }, sourceLocation: sourceLocation)

        var plain: [[UInt8]] = []
        KeywordTokenizer.forEachTerm(of: text) { plain.append(Array($0)) }
        #expect(plain == reference, sourceLocation: sourceLocation)

        let strings = KeywordTokenizer.terms(of: text).map { Array($0.utf8) }
        #expect(
            strings == ReferenceKeywordTokenizer.terms(of: text).map { Array($0.utf8) },
            sourceLocation: sourceLocation
        )

        var counted: [[UInt8]?] = []
        KeywordIndex.forEachCountedTerm(of: text) { counted.append($0.map { Array($0) }) }
        var referenceCounted: [[UInt8]?] = []
        ReferenceKeywordTokenizer.forEachCountedTerm(of: text) { referenceCounted.append($0.map { Array($0) }) }
        #expect(counted == referenceCounted, sourceLocation: sourceLocation)
    }

    /// Every file of the repository's `samples/` folder, its bytes read as UTF-8 (a binary file too: its
    /// replacement characters and stray ASCII are text as well).
    @Test("the samples' terms are the reference's")
    func samples() throws {
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("samples")
        let files = try #require(FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil))
        var read = 0
        for case let file as URL in files {
            guard let data = try? Data(contentsOf: file), !data.isEmpty else { continue }
            Self.expectSameTerms(String(decoding: data.prefix(1 << 20), as: UTF8.self))
            read += 1
        }
        #expect(read > 50)
    }

    @Test(
        "edge cases: stems, stop words, long words, CR LF, marks after ASCII, words running into non-ASCII",
        arguments: [
            "", " ", "a", "A", "The", "THE", "where WHICH whose", "queries series eies aies ties Ties",
            "toes foes aes ees oes bus BUS class glass gas is its as us", "files fixes boxes s ss sss", "x86_64",
            "cafés CAFÉS caféteria", "word\u{301} next", "a\r\n\u{301}b", "\r\u{301}", " \u{301}x", "x\u{0308}y",
            "abcé", "éabc", "abc é abc", "abc\u{301}", "ÉTÉ été", "東京abc", "abc東京", "abc-東京-abc", "ﬁles ﬁle",
            String(repeating: "a", count: 199) + "s", String(repeating: "b", count: 201),
            String(repeating: "é", count: 120), String(repeating: "x", count: 5000) + " end",
            "1st 2nd 3rd 10s 100s", "İstanbul ΟΔΟΣ ΣΑΣ.", "\u{00A0}nbsp\u{00A0}", "👨‍👩‍👧 🇨🇭 a\u{200D}b",
            "three\u{2003}spaces", "naïve\nnaive\r\nnaïve", "Straße STRASSE", "٣ ３ 3",
        ]
    )
    func edgeCases(text: String) {
        Self.expectSameTerms(text)
    }

    /// Random text: random pieces of every kind (ASCII words in any case, stop words, plurals, digits,
    /// punctuation, line breaks, accents composed and not, marks on their own, Greek, Cyrillic, Devanagari,
    /// Hangul, kana, Han, emoji, joiners, ligatures, long words) and random scalars from every plane's
    /// common blocks, joined with and without spaces.
    @Test("random Unicode text gives the reference's terms", arguments: 1...12)
    func randomText(seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        for _ in 0..<400 {
            let pieces = (0..<Int(generator.next() % 40)).map { _ in Self.piece(&generator) }
            let separator = generator.next() % 3 == 0 ? "" : (generator.next() % 2 == 0 ? " " : "\r\n")
            Self.expectSameTerms(pieces.joined(separator: separator))
        }
    }

    static let pieces = [
        "The", "the", "OF", "Which", "where", "invoices", "Queries", "series", "boxes", "toes", "bus", "class",
        "status", "CHF-120", "x86_64", "0", "99", "1.5", "users'", "o'clock", "e-mail", ".", ",", "?!", "(", ")",
        "\t", "\n", "\r", "\r\n", " ", "  ", "é", "É", "e\u{301}", "E\u{301}", "\u{301}", "\u{308}", "\u{20DD}",
        "café", "naïve", "Ångström", "Straße", "ŒUVRE", "Łódź", "ǿ", "ﬁ", "ﬃ", "ΟΔΟΣ", "Σ", "σς", "Москва",
        "йод", "नमस्ते", "한국어", "カタカナ", "ひらがな", "東京都", "日", "👍", "👨‍👩‍👧", "🇨🇭", "\u{200D}",
        "\u{FE0F}", "\u{00A0}", "\u{2028}", "İ", "ı", "ǅ", "٣", "３", "Ⅻ", "½", "x²", "\u{FFFD}",
    ]

    static func piece(_ generator: inout SplitMix64) -> String {
        switch generator.next() % 6 {
        case 0, 1:
            return pieces[Int(generator.next() % UInt64(pieces.count))]
        case 2:
            // An ASCII word in random case, sometimes long, sometimes ending in a plural.
            let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
            let length = generator.next() % 8 == 0 ? Int(generator.next() % 260) : Int(1 + generator.next() % 9)
            let word = String((0..<length).map { _ in letters[Int(generator.next() % UInt64(letters.count))] })
            let endings = ["", "s", "es", "ies", "eies", "aies", "aes", "oes", "us", "ss", "S", "IES"]
            return word + endings[Int(generator.next() % UInt64(endings.count))]
        default:
            // Random scalars from the blocks below, including marks and separators.
            let blocks: [ClosedRange<UInt32>] = [
                0x20...0x7E, 0xA0...0x24F, 0x300...0x36F, 0x370...0x3FF, 0x400...0x4FF, 0x900...0x97F,
                0x1E00...0x1EFF, 0x2000...0x206F, 0x3040...0x30FF, 0x4E00...0x4E80, 0xAC00...0xAC80,
                0xFB00...0xFB06, 0xFF00...0xFF60, 0x1F300...0x1F64F, 0x20000...0x20010,
            ]
            var text = ""
            for _ in 0..<Int(1 + generator.next() % 8) {
                let block = blocks[Int(generator.next() % UInt64(blocks.count))]
                let value = block.lowerBound + UInt32(generator.next() % UInt64(block.count))
                if let scalar = Unicode.Scalar(value) { text.unicodeScalars.append(scalar) }
            }
            return text
        }
    }
}
