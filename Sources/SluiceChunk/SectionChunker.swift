import SluiceCore

/// A run of a section's text, by UTF-8 offsets, with its token count.
struct TextPiece: Equatable {
    var range: Range<Int>
    var tokens: Int
}

/// Chunks one ``TextSection`` for ``RecursiveChunker``: it splits the section's text into pieces
/// (`SectionChunker+Splitting.swift`) and merges them into chunks (`SectionChunker+Merging.swift`).
///
/// It works on the section's UTF-8 bytes, borrowed for the duration of ``chunks(of:firstOrdinal:using:)``,
/// with integer offsets; `bytes` must not outlive that call.
struct SectionChunker {
    let text: String
    let bytes: UnsafeBufferPointer<UInt8>
    let counter: any TokenCounter
    /// The counts before each cut of the section, when the counter is additive and prefers counting once:
    /// counting a range then costs a word at each end, not the range.
    let index: TokenCountIndex?
    /// The counts of the short texts counted directly so far, when there is an index (see ``ShortTextCounts``).
    let shortCounts: ShortTextCounts
    let maxTokens: Int
    let overlapTokens: Int
    let page: Int?
    let headingPath: [String]
    let metadata: [String: String]
    let firstOrdinal: Int

    /// The chunks made so far.
    var chunks: [Chunk] = []
    /// The pieces of the chunk being formed; the first `carried` of them repeat the previous chunk.
    var pending: [TextPiece] = []
    var pendingTokens = 0
    var carried = 0
    /// The pieces of the last chunk emitted, until the next chunk takes its overlap from them.
    var previous: [TextPiece] = []

    /// Chunks `section`, numbering its chunks from `firstOrdinal`.
    static func chunks(of section: TextSection, firstOrdinal: Int, using chunker: RecursiveChunker) -> [Chunk] {
        var text = section.text
        text.makeContiguousUTF8()
        return UTF8Decoding.withBytes(of: text) { bytes in
            let index = (chunker.counter as? any AdditiveTokenCounter).flatMap {
                $0.prefersCountingOnce ? TokenCountIndex(counter: $0, text: text[...], length: bytes.count) : nil
            }
            var sectionChunker = SectionChunker(
                text: text,
                bytes: bytes,
                counter: chunker.counter,
                index: index,
                shortCounts: ShortTextCounts(textLength: index == nil ? 0 : bytes.count),
                maxTokens: chunker.maxTokens,
                overlapTokens: chunker.overlapTokens,
                page: section.page,
                headingPath: section.headingPath,
                metadata: section.metadata,
                firstOrdinal: firstOrdinal
            )
            sectionChunker.run()
            return sectionChunker.chunks
        }
    }

    private mutating func run() {
        guard let range = trimmed(0..<bytes.count) else { return }
        split(range, tokens: count(range), level: .paragraph)
        finish()
    }

    /// The counter's count of the text at `range`: from the index where there is one (exact: see
    /// ``TokenCountIndex``; the few bytes at the ends counted once per section and spelling, see
    /// ``ShortTextCounts``), otherwise by counting the range.
    func count(_ range: Range<Int>) -> Int {
        guard let index else { return counter.count(substring(range)) }
        return index.count(range) { end in
            shortCounts.count(end, in: bytes) { counter.count(substring($0)) }
        }
    }

    /// The section's text at `range` (UTF-8 offsets on scalar boundaries).
    func substring(_ range: Range<Int>) -> Substring {
        let utf8 = text.utf8
        let lower = utf8.index(utf8.startIndex, offsetBy: range.lowerBound)
        let upper = utf8.index(lower, offsetBy: range.count)
        return text[lower..<upper]
    }

    /// Whether the scalar starting at `offset` is white space.
    func isWhitespace(at offset: Int) -> Bool {
        let byte = bytes[offset]
        if byte < 0x80 { return ASCII.isWhitespace(byte) }
        return UTF8Decoding.scalar(in: bytes, at: offset).scalar.properties.isWhitespace
    }

    /// `range` without white space at either end, or `nil` when nothing else is left.
    func trimmed(_ range: Range<Int>) -> Range<Int>? {
        var lower = range.lowerBound
        while lower < range.upperBound && isWhitespace(at: lower) {
            lower += UTF8Decoding.scalar(in: bytes, at: lower).length
        }
        var upper = range.upperBound
        while upper > lower {
            let start = UTF8Decoding.scalarStart(in: bytes, before: upper)
            guard isWhitespace(at: start) else { break }
            upper = start
        }
        return lower < upper ? lower..<upper : nil
    }

    /// Appends the chunk at `range`, whose count is `tokens`.
    mutating func emit(_ range: Range<Int>, tokens: Int) {
        chunks.append(
            Chunk(
                ordinal: firstOrdinal + chunks.count,
                text: String(substring(range)),
                tokenCount: tokens,
                startOffset: range.lowerBound,
                page: page,
                headingPath: headingPath,
                metadata: metadata
            )
        )
    }
}
