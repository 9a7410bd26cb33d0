import SluiceCore

/// Counts tokens as words: a stand-in until a real WordPiece or BPE tokenizer arrives.
///
/// - A maximal run of letters, digits and combining marks is one token (`naïve`, `x86`, `2024`).
/// - Every other visible character is one token of its own: punctuation, symbols, emoji and each CJK
///   ideograph (`don't` is three tokens, `東京` two).
/// - White space separates tokens and counts for nothing.
/// - A run longer than ``maxWordLength`` scalars counts one token per started ``maxWordLength``
///   scalars, the way subword tokenizers break hashes, base64 and other long strings into many tokens.
///   Without this a 50 MB line of letters would be "one token", and no chunk size could bound it.
///
/// White space separates, so counts add up across it: every white-space scalar after one that is not is a
/// cut (``AdditiveTokenCounter``). Counting is a single pass over the UTF-8 bytes, with a fast path for
/// ASCII: so cheap that ``RecursiveChunker`` is faster counting each part again than keeping a count at
/// every cut (``prefersCountingOnce`` is false).
public struct WordTokenCounter: AdditiveTokenCounter {
    /// The longest run of word characters, in Unicode scalars, that still counts as one token.
    public var maxWordLength: Int

    /// Creates a counter.
    /// - Parameter maxWordLength: The longest run of word characters, in Unicode scalars, that counts
    ///   as one token; longer runs count one token per started `maxWordLength` scalars. Pass `Int.max`
    ///   to count every run as one token whatever its length.
    public init(maxWordLength: Int = 24) {
        precondition(maxWordLength > 0, "maxWordLength must be positive")
        self.maxWordLength = maxWordLength
    }

    /// False: recounting a part costs about what looking its count up at the cuts does, and keeping a count
    /// at every word costs more (`sluice-bench chunk`: counting once was 12% slower).
    public var prefersCountingOnce: Bool { false }

    /// The number of tokens in `text`.
    public func count(_ text: Substring) -> Int {
        UTF8Decoding.withBytes(of: text) { countTokens(in: $0, reportingCuts: false) { _, _ in } }
    }

    /// The number of tokens in `text`, reporting each cut: white space after a scalar that is not.
    public func count(_ text: Substring, cuts cut: (_ offset: Int, _ tokensBefore: Int) -> Void) -> Int {
        UTF8Decoding.withBytes(of: text) { countTokens(in: $0, reportingCuts: true, cut) }
    }

    @inline(__always)
    private func countTokens(
        in bytes: UnsafeBufferPointer<UInt8>,
        reportingCuts: Bool,
        _ cut: (Int, Int) -> Void
    ) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        let maxWordLength = self.maxWordLength
        var tokens = 0
        // Scalars in the current word run; 0 outside a word.
        var run = 0
        // Whether the last scalar was not white space (a cut may follow).
        var afterVisible = false
        var index = 0
        let end = bytes.count
        while index < end {
            let byte = base[index]
            if byte < 0x80 {
                index += 1
                // The masks of `ASCII`, spelled out: this loop sees every byte, and debug builds do not
                // inline function calls (the bit operators are transparent, so they are inlined).
                let wordMask: UInt64 = byte < 64 ? 0x03FF_0000_0000_0000 : 0x07FF_FFFE_07FF_FFFE
                if wordMask & (1 &<< UInt64(byte & 63)) != 0 {
                    if run == 0 || run >= maxWordLength {
                        tokens += 1
                        run = 0
                    }
                    run += 1
                    afterVisible = true
                } else if byte > 0x20 || 0x0000_0001_0000_3E00 & (1 &<< UInt64(byte)) == 0 {
                    tokens += 1
                    run = 0
                    afterVisible = true
                } else {
                    if reportingCuts && afterVisible { cut(index - 1, tokens) }
                    run = 0
                    afterVisible = false
                }
                continue
            }
            let (scalar, length) = UTF8Decoding.scalar(in: bytes, at: index)
            let kind = ScalarKind(scalar)
            if kind == .whitespace {
                if reportingCuts && afterVisible { cut(index, tokens) }
                afterVisible = false
            } else {
                afterVisible = true
            }
            index += length
            switch kind {
            case .word:
                if run == 0 || run >= maxWordLength {
                    tokens += 1
                    run = 0
                }
                run += 1
            case .joiner:
                if run > 0 && run < maxWordLength { run += 1 }
            case .symbol:
                tokens += 1
                run = 0
            case .whitespace:
                run = 0
            }
        }
        return tokens
    }
}
