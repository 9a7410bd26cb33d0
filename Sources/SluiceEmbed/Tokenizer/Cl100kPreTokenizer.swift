/// Splits text into the pieces that cl100k_base's BPE encodes one by one, exactly as tiktoken's pattern
///
///     '(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s
///
/// does. Hand-written over Unicode scalars (the pattern's semantics; Swift's Regex on grapheme clusters
/// would merge "\r\n" and combining marks and split differently), one alternative per branch below, in
/// the pattern's order. `\s` is the White_Space property, `\p{L}` and `\p{N}` general categories.
enum Cl100kPreTokenizer {
    enum Kind: UInt8 {
        case newline, space, otherWhitespace, letter, number, apostrophe, other

        var isWhitespace: Bool { self == .newline || self == .space || self == .otherWhitespace }
    }

    static func kind(_ scalar: Unicode.Scalar) -> Kind {
        let v = scalar.value
        if v < 128 {
            switch v {
            case 10, 13: return .newline
            case 32: return .space
            case 9, 11, 12: return .otherWhitespace
            case 39: return .apostrophe
            case 48...57: return .number
            case 65...90, 97...122: return .letter
            default: return .other
            }
        }
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

    /// Calls `body` with the range of each piece of `scalars`, in order.
    static func split(_ scalars: [Unicode.Scalar], kinds: [Kind], _ body: (Range<Int>) -> Void) {
        let n = scalars.count
        var i = 0
        while i < n {
            let end = pieceEnd(scalars, kinds, from: i)
            body(i..<end)
            i = end
        }
    }

    private static func pieceEnd(_ s: [Unicode.Scalar], _ k: [Kind], from i: Int) -> Int {
        let n = s.count
        // '(?i:[sdmt]|ll|ve|re)
        if let end = TiktokenContraction.end(s, at: i) { return end }
        // [^\r\n\p{L}\p{N}]?+\p{L}++
        var j = i
        if k[j] != .newline && k[j] != .letter && k[j] != .number { j += 1 }
        if j < n, k[j] == .letter {
            while j < n, k[j] == .letter { j += 1 }
            return j
        }
        // \p{N}{1,3}+
        if k[i] == .number {
            j = i
            while j < n, j < i + 3, k[j] == .number { j += 1 }
            return j
        }
        // ' ?[^\s\p{L}\p{N}]++[\r\n]*+'
        j = i
        if k[j] == .space { j += 1 }
        if j < n, k[j] == .other || k[j] == .apostrophe {
            while j < n, k[j] == .other || k[j] == .apostrophe { j += 1 }
            while j < n, k[j] == .newline { j += 1 }
            return j
        }
        // Whitespace: the run [i, runEnd).
        var runEnd = i
        while runEnd < n, k[runEnd].isWhitespace { runEnd += 1 }
        guard runEnd > i else { return i + 1 }  // unreachable: every scalar matches a branch above
        // \s++$
        if runEnd == n { return n }
        // \s*[\r\n]: up to and including the run's last newline.
        var last = runEnd - 1
        while last >= i, k[last] != .newline { last -= 1 }
        if last >= i { return last + 1 }
        // \s+(?!\S): all but the last whitespace before a non-space.
        if runEnd - i >= 2 { return runEnd - 1 }
        // \s
        return i + 1
    }
}
