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

        init(_ scalar: Unicode.Scalar) {
            if scalar.isASCII {
                switch scalar.value {
                case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: self = .word
                default: self = .separator
                }
                return
            }
            let properties = scalar.properties
            if properties.isIdeographic {
                self = .ideograph
            } else if properties.isAlphabetic {
                self = .word
            } else {
                switch properties.generalCategory {
                case .decimalNumber, .letterNumber, .otherNumber, .nonspacingMark, .spacingMark, .enclosingMark:
                    self = .word
                case .format:
                    self = .joiner
                default:
                    self = .separator
                }
            }
        }
    }
}
