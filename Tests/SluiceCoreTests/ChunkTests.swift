import SluiceTesting
import Testing

@testable import SluiceCore

/// `Chunk.normalize` is the key of the embedding cache: a change of its output would miss every cached
/// vector. Its bytes are compared with a copy of the scalar-by-scalar implementation it had before it read
/// ASCII byte by byte.
@Suite struct ChunkTests {
    /// The implementation before the byte-wise fast path (2026-11-27), kept as the reference.
    static func referenceNormalize(_ text: String) -> String {
        var out = [UInt8]()
        out.reserveCapacity(text.utf8.count)
        var pendingSpace = false
        for scalar in text.unicodeScalars {
            let isSpace =
                scalar.value < 0x80
                ? (scalar.value == 0x20 || (scalar.value >= 0x09 && scalar.value <= 0x0D))
                : scalar.properties.isWhitespace
            if isSpace {
                pendingSpace = !out.isEmpty
            } else {
                if pendingSpace { out.append(0x20) }
                pendingSpace = false
                if scalar.value < 0x80 {
                    out.append(UInt8(scalar.value))
                } else {
                    UTF8.encode(scalar) { out.append($0) }
                }
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    static let sweep: [String] = [
        "", " ", "  ", "\n", "\r\n", "\t\u{0B}\u{0C}\r\n ", "a", " a", "a ", "  a  ", "a b", "a  b", "a\tb",
        "a\nb", "a\r\nb", "a\u{0B}b", "a\u{0C}b", "a\rb", "\t a \n b  ", "one two\n\nthree ",
        "plain ASCII text, with punctuation: (1) [2] {3}; done.", "\u{00}a\u{01}b\u{08}c\u{0E}d\u{1F}e\u{7F}",
        "a\u{00A0}b", "\u{00A0}a\u{00A0}", "a\u{2028}b\u{2029}c", "\u{3000}全角\u{3000}空白\u{3000}", "a\u{0085}b",
        "\u{0085}", "\u{1680}a\u{2000}b\u{200A}c\u{202F}d\u{205F}e", "a\u{200B}b", "a\u{FEFF}b",
        "naïve café — “quotes” ‘and’ …", "日本語のテキスト。改行\nあり", "emoji 👩‍👩‍👧 and 🇩🇪 flags",
        "e\u{0301} combining \u{0301}", "\u{10FFFF}\u{E000}", "mixed \u{00A0} \t\u{3000}\n runs  \u{2028}end",
        "Ünïcödé\u{00A0}", String(repeating: "word ", count: 100), String(repeating: "\n", count: 40) + "x",
    ]

    @Test(arguments: sweep) func normalizeMatchesTheReference(_ text: String) {
        #expect(Array(Chunk.normalize(text).utf8) == Array(Self.referenceNormalize(text).utf8))
    }

    @Test func normalizeMatchesTheReferenceOnRandomStrings() {
        // ASCII (white space and controls weighted up), Latin-1, the Unicode spaces, CJK, astral.
        let pool: [Unicode.Scalar] =
            (0x00...0x7F).compactMap(Unicode.Scalar.init) + Array(repeating: " ", count: 20)
            + Array(repeating: "\n", count: 6) + ["\t", "\r", "\u{0B}", "\u{0C}"]
            + [
                0x85, 0xA0, 0xE9, 0x1680, 0x2000, 0x2007, 0x200A, 0x200B, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000,
                0x65E5, 0xFEFF, 0x1F600, 0x10FFFF,
            ]
            .compactMap(Unicode.Scalar.init(_:) as (UInt32) -> Unicode.Scalar?)
        var random = SplitMix64(seed: 19)
        for round in 0..<2_000 {
            var text = String.UnicodeScalarView()
            let length = Int.random(in: 0...(round % 10 == 0 ? 600 : 40), using: &random)
            for _ in 0..<length { text.append(pool.randomElement(using: &random)!) }
            let string = String(text)
            #expect(
                Array(Chunk.normalize(string).utf8) == Array(Self.referenceNormalize(string).utf8),
                "\(string.debugDescription)"
            )
        }
    }

    @Test func normalizeOfASubstringsCopyMatches() {
        let text = "  head \u{00A0} tail\n"
        let slice = String(text.dropFirst(3).dropLast(2))
        #expect(Chunk.normalize(slice) == Self.referenceNormalize(slice))
    }
}
