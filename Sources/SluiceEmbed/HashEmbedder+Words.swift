import SluiceCore

extension HashEmbedder {
    /// The words of a lowercased text, in order, as ranges of its UTF-8 bytes: runs of letters, digits and
    /// combining marks (format characters such as a zero-width non-joiner continue a word, but never start
    /// one); each CJK ideograph is a word of its own; everything else (white space, punctuation, symbols,
    /// emoji) separates words. ASCII is judged byte by byte; other scalars are decoded.
    static func wordRanges(inLowercased bytes: UnsafeBufferPointer<UInt8>) -> [Range<Int>] {
        var words: [Range<Int>] = []
        // Where the current word starts; nil between words.
        var start: Int?
        var index = 0
        while index < bytes.count {
            let (scalar, length) = UTF8Decoding.scalar(in: bytes, at: index)
            // An ASCII letter or digit makes words; every other ASCII byte separates them.
            let kind: WordClass = length == 1 ? (ASCII.isWord(bytes[index]) ? .word : .separator) : WordClass(scalar)
            switch kind {
            case .word:
                if start == nil { start = index }
            case .joiner:
                break
            case .ideograph:
                if let first = start { words.append(first..<index) }
                start = nil
                words.append(index..<index + length)
            case .separator:
                if let first = start { words.append(first..<index) }
                start = nil
            }
            index += length
        }
        if let first = start { words.append(first..<bytes.count) }
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
