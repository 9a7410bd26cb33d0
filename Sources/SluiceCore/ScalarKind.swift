/// How the word token counter, the chunker and the hash embedder see one Unicode scalar: one definition
/// of "word" for all of them.
package enum ScalarKind {
    /// White space (Unicode `White_Space`): separates tokens and is never part of a chunk's ends.
    case whitespace
    /// A letter, digit or combining mark: runs of these form one word.
    case word
    /// A format character such as a zero-width joiner: continues a word, but never starts a token.
    case joiner
    /// Anything else that is visible (punctuation, symbols, emoji, each CJK ideograph): one token each.
    case symbol

    /// Classifies an ASCII byte with bit masks (cheap even in debug builds, unlike range patterns).
    @inline(__always)
    package init(ascii byte: UInt8) {
        if ASCII.isWord(byte) {
            self = .word
        } else if ASCII.isWhitespace(byte) {
            self = .whitespace
        } else {
            self = .symbol
        }
    }

    package init(_ scalar: Unicode.Scalar) {
        if scalar.value < 0x80 {
            self.init(ascii: UInt8(truncatingIfNeeded: scalar.value))
            return
        }
        let properties = scalar.properties
        if properties.isWhitespace {
            self = .whitespace
        } else if properties.isIdeographic {
            self = .symbol
        } else if properties.isAlphabetic {
            self = .word
        } else {
            switch properties.generalCategory {
            case .decimalNumber, .letterNumber, .otherNumber, .nonspacingMark, .spacingMark, .enclosingMark:
                self = .word
            case .format:
                self = .joiner
            default:
                self = .symbol
            }
        }
    }
}

/// Bit-mask classification of ASCII bytes, for the hot loops.
package enum ASCII {
    /// `0-9`, `A-Z`, `a-z`.
    @inline(__always)
    package static func isWord(_ byte: UInt8) -> Bool {
        if byte < 64 { return 0x03FF_0000_0000_0000 & (UInt64(1) &<< UInt64(byte)) != 0 }  // 0x30...0x39
        if byte < 128 { return 0x07FF_FFFE_07FF_FFFE & (UInt64(1) &<< UInt64(byte &- 64)) != 0 }  // A-Z, a-z
        return false
    }

    /// Tab, line feed, vertical tab, form feed, carriage return, space.
    @inline(__always)
    package static func isWhitespace(_ byte: UInt8) -> Bool {
        byte <= 0x20 && 0x0000_0001_0000_3E00 & (UInt64(1) &<< UInt64(byte)) != 0
    }
}
