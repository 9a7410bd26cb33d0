/// tiktoken's `(?i:'s|'t|'re|'ve|'m|'ll|'d)`, shared by both pre-tokenizers.
enum TiktokenContraction {
    /// The end of a contraction starting at `j`, or nil.
    static func end(_ s: [Unicode.Scalar], at j: Int) -> Int? {
        guard j + 1 < s.count, s[j] == "'", let a = folded(s[j + 1]) else { return nil }
        if "stmd".contains(a) { return j + 2 }
        if j + 2 < s.count, let b = folded(s[j + 2]),
            (a == "r" && b == "e") || (a == "v" && b == "e") || (a == "l" && b == "l")
        {
            return j + 3
        }
        return nil
    }

    /// A letter a contraction may continue with, case-folded as `(?i)` does (`ſ` folds to `s`), or nil.
    private static func folded(_ scalar: Unicode.Scalar) -> Character? {
        switch scalar.value {
        case 0x53, 0x73, 0x17F: return "s"
        case 0x54, 0x74: return "t"
        case 0x4D, 0x6D: return "m"
        case 0x44, 0x64: return "d"
        case 0x4C, 0x6C: return "l"
        case 0x56, 0x76: return "v"
        case 0x52, 0x72: return "r"
        case 0x45, 0x65: return "e"
        default: return nil
        }
    }
}
