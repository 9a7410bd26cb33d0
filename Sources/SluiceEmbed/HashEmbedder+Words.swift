import SluiceCore

extension HashEmbedder {
    /// The lowercased words of `text`, in order: runs of letters, digits and combining marks (format
    /// characters such as a zero-width non-joiner continue a word); each CJK ideograph is a word of its
    /// own; everything else (white space, punctuation, symbols, emoji) separates words.
    static func words(in text: String) -> [String] {
        var words: [String] = []
        var current = String.UnicodeScalarView()
        func endWord() {
            if !current.isEmpty {
                words.append(String(current))
                current = String.UnicodeScalarView()
            }
        }
        for scalar in text.lowercased().unicodeScalars {
            switch WordClass(scalar) {
            case .word:
                current.append(scalar)
            case .joiner:
                if !current.isEmpty { current.append(scalar) }
            case .ideograph:
                endWord()
                words.append(String(scalar))
            case .separator:
                endWord()
            }
        }
        endWord()
        return words
    }

    private enum WordClass {
        case word, joiner, ideograph, separator

        /// The shared ``ScalarKind``, except that each CJK ideograph is a word of its own.
        init(_ scalar: Unicode.Scalar) {
            switch ScalarKind(scalar) {
            case .word: self = .word
            case .joiner: self = .joiner
            case .whitespace: self = .separator
            case .symbol: self = scalar.value >= 0x80 && scalar.properties.isIdeographic ? .ideograph : .separator
            }
        }
    }
}
