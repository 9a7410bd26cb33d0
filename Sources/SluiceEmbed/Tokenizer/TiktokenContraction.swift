import SluiceCore

/// tiktoken's `(?i:'s|'t|'re|'ve|'m|'ll|'d)`, shared by both pre-tokenizers.
enum TiktokenContraction {
    /// The end of a contraction starting at byte offset `j` of `bytes` (valid UTF-8), or nil.
    @inline(__always)
    static func end(_ bytes: UnsafeBufferPointer<UInt8>, at j: Int) -> Int? {
        guard bytes[j] == UInt8(ascii: "'") else { return nil }
        return afterApostrophe(bytes, at: j + 1)
    }

    private static func afterApostrophe(_ bytes: UnsafeBufferPointer<UInt8>, at j: Int) -> Int? {
        guard let (a, aEnd) = folded(bytes, at: j) else { return nil }
        if a == UInt8(ascii: "s") || a == UInt8(ascii: "t") || a == UInt8(ascii: "m") || a == UInt8(ascii: "d") {
            return aEnd
        }
        guard let (b, bEnd) = folded(bytes, at: aEnd) else { return nil }
        switch (a, b) {
        case (UInt8(ascii: "r"), UInt8(ascii: "e")), (UInt8(ascii: "v"), UInt8(ascii: "e")),
            (UInt8(ascii: "l"), UInt8(ascii: "l")):
            return bEnd
        default:
            return nil
        }
    }

    /// The letter at `j` that a contraction may continue with, case-folded as `(?i)` does (`ſ` folds to
    /// `s`), as a lowercase ASCII byte, and the offset after it; nil for any other scalar or the end.
    @inline(__always)
    private static func folded(_ bytes: UnsafeBufferPointer<UInt8>, at j: Int) -> (UInt8, Int)? {
        guard j < bytes.count else { return nil }
        let byte = bytes[j]
        switch byte | 0x20 {
        case UInt8(ascii: "s"), UInt8(ascii: "t"), UInt8(ascii: "m"), UInt8(ascii: "d"), UInt8(ascii: "l"),
            UInt8(ascii: "v"), UInt8(ascii: "r"), UInt8(ascii: "e"):
            // Only the ASCII letters themselves land on these cases from below 0x80.
            return byte < 0x80 ? (byte | 0x20, j + 1) : nil
        default:
            break
        }
        // ſ (U+017F) is C5 BF.
        if byte == 0xC5 && j + 1 < bytes.count && bytes[j + 1] == 0xBF { return (UInt8(ascii: "s"), j + 2) }
        return nil
    }
}
