import SluiceCore

/// Splits text into the pieces that o200k_base's BPE encodes one by one, exactly as tiktoken's pattern
///
///     [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
///     |[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
///     |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
///
/// does, including the backtracking of its greedy quantifiers (the "upper" and "lower" classes overlap in
/// Lm, Lo and marks, and a mark is also in the optional prefix class). Over the UTF-8 bytes with the
/// pattern's semantics on Unicode scalars; ASCII bytes are classified by bit masks, only other scalars are
/// decoded.
enum O200kPreTokenizer {
    enum Kind: UInt8 {
        case newline, space, otherWhitespace, number, upper, lower, caseless, mark, slash, apostrophe, other

        var isWhitespace: Bool { self == .newline || self == .space || self == .otherWhitespace }
        /// [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
        var isUpperClass: Bool { self == .upper || self == .caseless || self == .mark }
        /// [\p{Ll}\p{Lm}\p{Lo}\p{M}]
        var isLowerClass: Bool { self == .lower || self == .caseless || self == .mark }
        /// [^\r\n\p{L}\p{N}]
        var isPrefix: Bool {
            !(self == .newline || self == .number || self == .upper || self == .lower || self == .caseless)
        }
        /// [^\s\p{L}\p{N}]
        var isPunctuation: Bool { self == .mark || self == .slash || self == .apostrophe || self == .other }
    }

    static func kind(_ scalar: Unicode.Scalar) -> Kind {
        let v = scalar.value
        if v < 128 { return asciiKind(UInt8(truncatingIfNeeded: v)) }
        switch v {
        case 0x85, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000:
            return .otherWhitespace
        default: break
        }
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .titlecaseLetter: return .upper
        case .lowercaseLetter: return .lower
        case .modifierLetter, .otherLetter: return .caseless
        case .nonspacingMark, .spacingMark, .enclosingMark: return .mark
        case .decimalNumber, .letterNumber, .otherNumber: return .number
        default: return .other
        }
    }

    @inline(__always)
    static func asciiKind(_ byte: UInt8) -> Kind {
        let bit = UInt64(1) &<< UInt64(byte & 63)
        if byte >= 64 {
            if 0x0000_0000_07FF_FFFE & bit != 0 { return .upper }
            return 0x07FF_FFFE_0000_0000 & bit != 0 ? .lower : .other
        }
        if 0x03FF_0000_0000_0000 & bit != 0 { return .number }
        switch byte {
        case 32: return .space
        case 10, 13: return .newline
        case 9, 11, 12: return .otherWhitespace
        case 39: return .apostrophe
        case 47: return .slash
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
        var i = 0
        while i < bytes.count {
            let end = pieceEnd(bytes, from: i)
            body(i..<end)
            i = end
        }
    }

    static func pieceEnd(_ b: UnsafeBufferPointer<UInt8>, from i: Int) -> Int {
        let n = b.count
        let (first, firstLength) = kind(b, i)
        // The letter alternatives start after the optional prefix scalar, or, backtracking, at i.
        let afterPrefix = first.isPrefix ? i + firstLength : i
        // UPPER* LOWER+ contraction?
        var p = afterPrefix
        while true {
            var u = p
            var kindAtU: Kind? = nil
            while u < n {
                let (k, length) = kind(b, u)
                guard k.isUpperClass else {
                    kindAtU = k
                    break
                }
                u += length
            }
            var end: Int?
            if let k = kindAtU, k.isLowerClass {
                var e = u
                while e < n {
                    let (k, length) = kind(b, e)
                    guard k.isLowerClass else { break }
                    e += length
                }
                end = e
            } else {
                // Backtrack UPPER*: LOWER+ is the last lower-class scalar of the run.
                var j = u
                while j > p {
                    let start = UTF8Decoding.scalarStart(in: b, before: j)
                    if kind(b, start).0.isLowerClass {
                        end = j
                        break
                    }
                    j = start
                }
            }
            if let end { return contractionEnd(b, at: end) }
            if p == i { break }
            p = i
        }
        // UPPER+ LOWER* contraction?
        p = afterPrefix
        while true {
            var u = p
            while u < n {
                let (k, length) = kind(b, u)
                guard k.isUpperClass else { break }
                u += length
            }
            if u > p {
                var e = u
                while e < n {
                    let (k, length) = kind(b, e)
                    guard k.isLowerClass else { break }
                    e += length
                }
                return contractionEnd(b, at: e)
            }
            if p == i { break }
            p = i
        }
        // \p{N}{1,3}
        if first == .number {
            var j = i + firstLength
            for _ in 0..<2 {
                guard j < n else { break }
                let (k, length) = kind(b, j)
                guard k == .number else { break }
                j += length
            }
            return j
        }
        // ' ?[^\s\p{L}\p{N}]+[\r\n/]*'
        var e = first == .space ? i + 1 : i
        if e < n {
            var (k, length) = kind(b, e)
            if k.isPunctuation {
                repeat {
                    e += length
                    guard e < n else { break }
                    (k, length) = kind(b, e)
                } while k.isPunctuation
                while e < n && (b[e] == 10 || b[e] == 13 || b[e] == 47) { e += 1 }
                return e
            }
        }
        var runEnd = i
        while runEnd < n {
            let (k, length) = kind(b, runEnd)
            guard k.isWhitespace else { break }
            runEnd += length
        }
        guard runEnd > i else { return i + firstLength }  // unreachable: every scalar matches a branch above
        // \s*[\r\n]+: up to and including the run's last newline (ASCII: no byte of another scalar equals it).
        var last = runEnd - 1
        while last >= i && b[last] != 10 && b[last] != 13 { last -= 1 }
        if last >= i { return last + 1 }
        // \s+(?!\S), then \s+
        if runEnd == n { return n }
        let lastStart = UTF8Decoding.scalarStart(in: b, before: runEnd)
        return lastStart > i ? lastStart : runEnd
    }

    /// `end`, or the end of a contraction that follows it.
    @inline(__always)
    private static func contractionEnd(_ b: UnsafeBufferPointer<UInt8>, at end: Int) -> Int {
        end < b.count ? TiktokenContraction.end(b, at: end) ?? end : end
    }
}
