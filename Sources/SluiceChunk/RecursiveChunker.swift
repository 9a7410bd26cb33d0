import SluiceCore

/// Splits text recursively by paragraphs, lines, sentences, words and, as a last resort, characters,
/// then merges the pieces greedily into chunks of at most ``maxTokens`` tokens.
///
/// Each ``TextSection`` is chunked on its own: its chunks carry its page and heading path, and no
/// chunk ever holds text of two sections. Within a section:
///
/// 1. A piece that fits in ``maxTokens`` is kept whole. A piece that does not is split at the next
///    kind of separator: blank lines (paragraphs), then line breaks, then sentence ends (`. `, `? `,
///    `! `, `…`, and `。`, `！`, `？` even without a following space), then white space (words).
///    A single "word" that is still too long (a 50 MB line without spaces) is cut into windows of
///    characters, never inside a grapheme cluster where avoidable.
/// 2. Adjacent pieces are merged greedily while the sum of their counts fits in ``maxTokens``.
/// 3. A chunk starts with the last pieces of the previous chunk, as many whole pieces as fit in
///    ``overlapTokens`` (never the whole previous chunk). When even the last piece is larger than
///    that, its last words are taken instead. Overlap is dropped rather than let a chunk grow past
///    ``maxTokens``.
///
/// Guarantees: every chunk's ``Chunk/tokenCount`` is the counter's count of its text and is at most
/// ``maxTokens`` (the one exception is a single character that by itself counts more than
/// ``maxTokens``); ordinals run from 0 without gaps across the document; chunk text is a contiguous,
/// trimmed, non-empty substring of its section, at UTF-8 offset ``Chunk/startOffset``; every
/// non-white-space character of the input is in some chunk, and with no overlap in exactly one, in
/// order. The same input always gives the same chunks.
///
/// The chunker only talks to its ``TokenCounter``. With an ``AdditiveTokenCounter`` that prefers counting
/// once (the BPE and WordPiece tokenizers) each section is counted once: the counter reports the cuts where counts add up, and the
/// count of any piece or merged chunk is then the difference of the counts at the cuts inside it plus a
/// count of the word at each end (`TokenCountIndex`) — exact, and no merged text is tokenized again.
/// With any other counter (and the word counter, cheaper than that bookkeeping) each piece is counted as the splitting reaches it, and every chunk once more. The chunks are the same.
/// Merging decides on the sum of the pieces' counts; a chunk whose own count comes out larger (white
/// space between pieces can count) is shrunk until it fits. Work is linear in the size of the text: each
/// byte is scanned at most once per separator level and counted a small, constant number of times.
public struct RecursiveChunker: Chunker {
    /// The largest chunk, in the counter's tokens.
    public let maxTokens: Int
    /// How many tokens of the end of a chunk the next chunk repeats, at most.
    public let overlapTokens: Int
    /// The embedder's token counter.
    public let counter: any TokenCounter

    /// Creates a chunker.
    /// - Parameters:
    ///   - maxTokens: The largest chunk, in tokens of `counter`; at least 1.
    ///   - overlapTokens: The most tokens consecutive chunks of a section share; from 0 to
    ///     `maxTokens - 1`.
    ///   - counter: Counts tokens as the embedder will (see ``Embedder/tokenCounter``).
    public init(maxTokens: Int, overlapTokens: Int, counter: any TokenCounter) {
        precondition(maxTokens > 0, "maxTokens must be positive")
        precondition(
            overlapTokens >= 0 && overlapTokens < maxTokens,
            "overlapTokens must be in 0..<maxTokens"
        )
        self.maxTokens = maxTokens
        self.overlapTokens = overlapTokens
        self.counter = counter
    }

    /// Chunks a document's text, section by section.
    /// - Parameter text: The extracted text.
    /// - Returns: The chunks of all sections in order, with ordinals from 0.
    public func chunk(_ text: ExtractedText) -> [Chunk] {
        var chunks: [Chunk] = []
        for section in text.sections {
            chunks += SectionChunker.chunks(of: section, firstOrdinal: chunks.count, using: self)
        }
        return chunks
    }
}
