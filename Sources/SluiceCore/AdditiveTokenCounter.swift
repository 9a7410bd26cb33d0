/// A ``TokenCounter`` whose counts add up across white space, so that one pass over a text gives the count
/// of any part of it that starts and ends at a word boundary, without counting that part again.
///
/// A *cut* is a UTF-8 offset where a white-space scalar follows one that is not, and where counts add up:
/// `count(a + b) == count(a) + count(b)` for every text `a` that ends with the scalar before the cut and every
/// text `b` that starts with the scalar after it. A counter reports the cuts it can vouch for; leaving one
/// out is always allowed (the chunker then counts across it).
///
/// Word counters add up at every such boundary. A BPE tokenizer adds up where its pre-tokenizer always
/// ends a piece, which holds at white space except where a piece of punctuation takes the line breaks that
/// follow it (tiktoken's `[^\s\p{L}\p{N}]++[\r\n]*`): `end.\n\n` tokenizes differently from `end.` and `\n\n`.
public protocol AdditiveTokenCounter: TokenCounter {
    /// Counts `text`, calling `cut(offset, tokensBefore)` at each cut, in order, with the count of the text
    /// before it.
    /// - Returns: The count of `text`, as ``TokenCounter/count(_:)`` gives it.
    func count(_ text: Substring, cuts cut: (_ offset: Int, _ tokensBefore: Int) -> Void) -> Int

    /// Whether a chunker should count each section once through its cuts and look the counts of its parts
    /// up, rather than count each part it considers. Counting once costs bookkeeping at every cut; it pays
    /// for a counter that is dear per byte (the BPE tokenizers: 1.7–1.9× faster), not for one about as
    /// cheap as that bookkeeping. The chunks are the same either way.
    var prefersCountingOnce: Bool { get }
}

extension AdditiveTokenCounter {
    /// True: counting a section once is the faster way unless a counter says otherwise.
    public var prefersCountingOnce: Bool { true }
}
