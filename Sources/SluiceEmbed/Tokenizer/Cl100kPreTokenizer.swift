import SluiceCore

/// Splits text into the pieces that cl100k_base's BPE encodes one by one, exactly as tiktoken's pattern
///
///     '(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s
///
/// does. Hand-written over the UTF-8 bytes with the pattern's semantics on Unicode scalars (Swift's Regex on
/// grapheme clusters would merge "\r\n" and combining marks and split differently), one alternative per
/// branch below, in the pattern's order. `\s` is the White_Space property, `\p{L}` and `\p{N}` general
/// categories. ASCII bytes are classified by bit masks; only other scalars are decoded.
enum Cl100kPreTokenizer {
    enum Kind: UInt8 {
        case newline, space, otherWhitespace, letter, number, apostrophe, other

        var isWhitespace: Bool { self == .newline || self == .space || self == .otherWhitespace }
    }

    static func kind(_ scalar: Unicode.Scalar) -> Kind {
        let v = scalar.value
        if v < 128 { return asciiKind(UInt8(truncatingIfNeeded: v)) }
        switch v {
        case 0x85, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000: return .otherWhitespace
        default: break
        }
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter: return .letter
        case .decimalNumber, .letterNumber, .otherNumber: return .number
        default: return .other
        }
    }

    @inline(__always)
    static func asciiKind(_ byte: UInt8) -> Kind {
        let bit = UInt64(1) &<< UInt64(byte & 63)
        if byte >= 64 { return 0x07FF_FFFE_07FF_FFFE & bit != 0 ? .letter : .other }
        if 0x03FF_0000_0000_0000 & bit != 0 { return .number }
        switch byte {
        case 32: return .space
        case 10, 13: return .newline
        case 9, 11, 12: return .otherWhitespace
        case 39: return .apostrophe
        default: return .other
        }
    }

    /// The kind of the scalar at byte offset `i` and its length in bytes.
    @inline(__always)
    static func kind(_ b: UnsafeBufferPointer<UInt8>, _ i: Int) -> (Kind, Int) {
        let byte = b[i]
        if byte < 0x80 { return (asciiKind(byte), 1) }
        let (scalar, length) = UTF8Decoding.scalar(in: b, at: i)
        return (kind(scalar), length)
    }

    /// Calls `body` with the byte range of each piece of `bytes` (valid UTF-8), in order.
    @inline(__always)
    static func split(_ bytes: UnsafeBufferPointer<UInt8>, _ body: (Range<Int>) -> Void) {
        let n = bytes.count
        var i = 0
        while i < n {
            let end = pieceEnd(bytes, from: i)
            body(i..<end)
            i = end
        }
    }

    static func pieceEnd(_ b: UnsafeBufferPointer<UInt8>, from i: Int) -> Int {
        let n = b.count
        // '(?i:[sdmt]|ll|ve|re)
        if let end = TiktokenContraction.end(b, at: i) { return end }
        let (first, firstLength) = kind(b, i)
        // [^\r\n\p{L}\p{N}]?+\p{L}++
        var j = i
        if first != .newline && first != .letter && first != .number { j += firstLength }
        if j < n {
            var (k, length) = kind(b, j)
            if k == .letter {
                repeat {
                    j += length
                    guard j < n else { break }
                    (k, length) = kind(b, j)
                } while k == .letter
                return j
            }
        }
        // \p{N}{1,3}+
        if first == .number {
            j = i + firstLength
            for _ in 0..<2 {
                guard j < n else { break }
                let (k, length) = kind(b, j)
                guard k == .number else { break }
                j += length
            }
            return j
        }
        // ' ?[^\s\p{L}\p{N}]++[\r\n]*+'
        j = first == .space ? i + 1 : i
        if j < n {
            var (k, length) = kind(b, j)
            if k == .other || k == .apostrophe {
                repeat {
                    j += length
                    guard j < n else { break }
                    (k, length) = kind(b, j)
                } while k == .other || k == .apostrophe
                while j < n && (b[j] == 10 || b[j] == 13) { j += 1 }
                return j
            }
        }
        // Whitespace: the run [i, runEnd).
        var runEnd = i
        while runEnd < n {
            let (k, length) = kind(b, runEnd)
            guard k.isWhitespace else { break }
            runEnd += length
        }
        guard runEnd > i else { return i + firstLength }  // unreachable: every scalar matches a branch above
        // \s++$
        if runEnd == n { return n }
        // \s*[\r\n]: up to and including the run's last newline (ASCII: no byte of another scalar equals it).
        var last = runEnd - 1
        while last >= i && b[last] != 10 && b[last] != 13 { last -= 1 }
        if last >= i { return last + 1 }
        // \s+(?!\S): all but the last whitespace before a non-space.
        let lastStart = UTF8Decoding.scalarStart(in: b, before: runEnd)
        if lastStart > i { return lastStart }
        // \s
        return i + firstLength
    }
}
