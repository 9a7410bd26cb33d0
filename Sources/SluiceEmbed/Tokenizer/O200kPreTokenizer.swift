/// Splits text into the pieces that o200k_base's BPE encodes one by one, exactly as tiktoken's pattern
///
///     [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
///     |[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
///     |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
///
/// does, including the backtracking of its greedy quantifiers (the "upper" and "lower" classes overlap in
/// Lm, Lo and marks, and a mark is also in the optional prefix class). Over Unicode scalars.
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
        switch scalar.value {
        case 10, 13: return .newline
        case 32: return .space
        case 47: return .slash
        case 39: return .apostrophe
        case 9, 11, 12, 0x85, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000:
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

    static func split(_ scalars: [Unicode.Scalar], kinds: [Kind], _ body: (Range<Int>) -> Void) {
        var i = 0
        while i < scalars.count {
            let end = pieceEnd(scalars, kinds, from: i)
            body(i..<end)
            i = end
        }
    }

    private static func pieceEnd(_ s: [Unicode.Scalar], _ k: [Kind], from i: Int) -> Int {
        let n = s.count
        let starts = k[i].isPrefix ? [i + 1, i] : [i]
        // UPPER* LOWER+ contraction?
        for p in starts {
            var u = p
            while u < n, k[u].isUpperClass { u += 1 }
            var end: Int?
            if u < n, k[u].isLowerClass {
                var e = u
                while e < n, k[e].isLowerClass { e += 1 }
                end = e
            } else {
                // Backtrack UPPER*: LOWER+ is the last lower-class scalar of the run.
                var j = u - 1
                while j >= p, !k[j].isLowerClass { j -= 1 }
                if j >= p { end = j + 1 }
            }
            if let end { return TiktokenContraction.end(s, at: end) ?? end }
        }
        // UPPER+ LOWER* contraction?
        for p in starts {
            var u = p
            while u < n, k[u].isUpperClass { u += 1 }
            if u > p {
                var e = u
                while e < n, k[e].isLowerClass { e += 1 }
                return TiktokenContraction.end(s, at: e) ?? e
            }
        }
        // \p{N}{1,3}
        if k[i] == .number {
            var j = i
            while j < n, j < i + 3, k[j] == .number { j += 1 }
            return j
        }
        // ' ?[^\s\p{L}\p{N}]+[\r\n/]*'
        let start = k[i] == .space ? i + 1 : i
        if start < n, k[start].isPunctuation {
            var e = start
            while e < n, k[e].isPunctuation { e += 1 }
            while e < n, k[e] == .newline || k[e] == .slash { e += 1 }
            return e
        }
        var runEnd = i
        while runEnd < n, k[runEnd].isWhitespace { runEnd += 1 }
        guard runEnd > i else { return i + 1 }  // unreachable: every scalar matches a branch above
        // \s*[\r\n]+: up to and including the run's last newline.
        var last = runEnd - 1
        while last >= i, k[last] != .newline { last -= 1 }
        if last >= i { return last + 1 }
        // \s+(?!\S), then \s+
        if runEnd == n { return n }
        return runEnd - i >= 2 ? runEnd - 1 : runEnd
    }
}
