/// Generated text for tests of a BPE tokenizer's table of piece counts: words made of syllables, most of them
/// not one token, some many times and some once, sharing their first 8 bytes, with punctuation runs that end
/// in NUL bytes (two pieces that differ only by trailing zero bytes) — a text that reuses pieces heavily and
/// also has more distinct pieces than a table holds.
package enum PieceRichText {
    private static let syllables = [
        "qu", "zor", "ph", "ae", "ix", "str", "ung", "ü", "ß", "é", "ø", "th", "ck", "yl", "oo", "vr", "ka", "ne",
        "mi", "ol", "ré", "ња", "日", "本", "gh", "wx", "ij",
    ]
    private static let punctuation = ["!?", ")]}>", "«»", "--", "::", "#@", "%&*", "~^", "/\\|", "ʼ'"]

    /// About `words` words (and punctuation), the same for the same `seed`.
    package static func make(words: Int, seed: UInt64) -> String {
        var generator = SplitMix64(seed: seed)
        func below(_ n: Int) -> Int { Int(generator.next() % UInt64(n)) }
        // A vocabulary: words of 1 to 8 syllables, and variants sharing a long stem.
        var vocabulary: [String] = []
        for _ in 0..<12_000 {
            var word = ""
            for _ in 0...below(8) { word += syllables[below(syllables.count)] }
            if below(2) == 0 { word = word.prefix(1).uppercased() + word.dropFirst() }
            vocabulary.append(word)
            if below(4) == 0 {
                let stem = String(word.prefix(7))
                // The same first 8 bytes with a space, the same length, not the same count.
                vocabulary += [stem + "ization", stem + "isation", stem + "qxzvjkw", stem + "izations"]
            }
        }
        var text = ""
        for index in 0..<words {
            // Skewed: half the words from the first 300, the rest from the whole vocabulary.
            let word = below(2) == 0 ? vocabulary[below(300)] : vocabulary[below(vocabulary.count)]
            switch below(20) {
            case 0: text += "\n"
            case 1: text += "  "
            case 2: text += "\t"
            case 3: text += String(below(100_000))
            case 4:
                text +=
                    (below(2) == 0 ? " " : "") + punctuation[below(punctuation.count)]
                    + String(repeating: "\u{0}", count: below(3))
            default: text += index == 0 ? "" : " "
            }
            text += word
        }
        return text
    }
}
