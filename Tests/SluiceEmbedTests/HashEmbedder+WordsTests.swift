import SluiceCore
import SluiceEmbed
import SluiceTesting
import Testing

/// The hash embedder's vectors are cached and stored under `feature-hash-v1`: reading words off the UTF-8
/// bytes must give the very vectors the scalar-by-scalar words did. They are compared, bit for bit, with a
/// copy of that implementation (2026-11-27).
@Suite struct HashEmbedderWordsTests {
    private struct SpaceCounter: TokenCounter {
        func count(_ text: Substring) -> Int { text.split(whereSeparator: \.isWhitespace).count }
    }

    /// The words as they were found before: lowercased, scalar by scalar, into new strings.
    static func referenceWords(in text: String) -> [String] {
        var words: [String] = []
        var current = String.UnicodeScalarView()
        func endWord() {
            if !current.isEmpty {
                words.append(String(current))
                current = String.UnicodeScalarView()
            }
        }
        for scalar in text.lowercased().unicodeScalars {
            switch ScalarKind(scalar) {
            case .word: current.append(scalar)
            case .joiner: if !current.isEmpty { current.append(scalar) }
            case .whitespace: endWord()
            case .symbol:
                if scalar.value >= 0x80 && scalar.properties.isIdeographic {
                    endWord()
                    words.append(String(scalar))
                } else {
                    endWord()
                }
            }
        }
        endWord()
        return words
    }

    static func referenceVector(for text: String, dimensions: Int) -> [Float] {
        var sums = [Double](repeating: 0, count: dimensions)
        func add(_ feature: String, weight: Double) {
            let hash = xxh3_64(feature)
            let bucket = Int((hash & 0xFFFF_FFFF) % UInt64(sums.count))
            sums[bucket] += hash >> 63 == 0 ? weight : -weight
        }
        let words = referenceWords(in: text)
        for (index, word) in words.enumerated() {
            add(word, weight: 1)
            if index > 0 { add(words[index - 1] + " " + word, weight: 0.5) }
        }
        let norm = sums.reduce(0) { $0 + $1 * $1 }.squareRoot()
        guard norm > 0 else {
            var unit = [Float](repeating: 0, count: dimensions)
            unit[0] = 1
            return unit
        }
        return sums.map { Float($0 / norm) }
    }

    static let sweep: [String] = [
        "", " ", "a", "A", "the cat sat on the mat", "Hello, World! HELLO... world?", "x86_64 and 2024-11-27",
        "naïve café Ünïcödé İstanbul ΣΊΣΥΦΟΣ straße", "東京は日本の首都です。人口は約千四百万人です。", "mixed東京text 首都2",
        "zero\u{200B}width \u{200C}joiner a\u{200D}b \u{200D}lead", "e\u{0301}\u{0301} combining", "emoji 👩‍👩‍👧 ok 🇩🇪",
        "tabs\tand\nlines\r\nand\u{00A0}nbsp\u{3000}ideographic space", "\u{FEFF}bom", "a-b_c.d/e:f", "Ⅻ ½ ① ٣",
        String(repeating: "word ", count: 300), "ǅungla ǈ ΐ ﬁ ﬀ",
    ]

    @Test(arguments: sweep) func vectorsMatchTheReference(_ text: String) async {
        for dimensions in [1, 7, 384] {
            let embedder = HashEmbedder(dimensions: dimensions, tokenCounter: SpaceCounter())
            let vector = await embedder.embed([text])[0]
            let reference = Self.referenceVector(for: text, dimensions: dimensions)
            #expect(vector.map(\.bitPattern) == reference.map(\.bitPattern))
        }
    }

    @Test func vectorsMatchTheReferenceOnRandomStrings() async {
        let pool: [Unicode.Scalar] =
            (0x20...0x7E).compactMap(Unicode.Scalar.init) + Array(repeating: " ", count: 15) + ["\n", "\t"]
            + [
                0xA0, 0xC9, 0xDF, 0xE9, 0x130, 0x301, 0x3A3, 0x200B, 0x200C, 0x200D, 0x2028, 0x3000, 0x3002, 0x4EAC,
                0x6771, 0xFB01, 0x1F600, 0x1F469,
            ]
            .compactMap(Unicode.Scalar.init(_:) as (UInt32) -> Unicode.Scalar?)
        var random = SplitMix64(seed: 27)
        let embedder = HashEmbedder(dimensions: 64, tokenCounter: SpaceCounter())
        var texts: [String] = []
        for round in 0..<1_000 {
            var text = String.UnicodeScalarView()
            let length = Int.random(in: 0...(round % 10 == 0 ? 400 : 30), using: &random)
            for _ in 0..<length { text.append(pool.randomElement(using: &random)!) }
            texts.append(String(text))
        }
        let vectors = await embedder.embed(texts)
        for (text, vector) in zip(texts, vectors) {
            let reference = Self.referenceVector(for: text, dimensions: 64)
            #expect(vector.map(\.bitPattern) == reference.map(\.bitPattern), "\(text.debugDescription)")
        }
    }
}
