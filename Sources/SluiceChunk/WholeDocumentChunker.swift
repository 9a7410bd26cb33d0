import SluiceCore

/// One chunk per document: its sections' text joined by blank lines, for a store that chunks and embeds
/// the text itself (``VectorSink/embedsText``, an OpenAI vector store). A document with no text gives no
/// chunk, as with the other chunkers.
public struct WholeDocumentChunker: Chunker {
    public let counter: any TokenCounter

    public init(counter: any TokenCounter = WordTokenCounter()) {
        self.counter = counter
    }

    public func chunk(_ text: ExtractedText) -> [Chunk] {
        let joined = text.sections.map(\.text).filter { !$0.allSatisfy(\.isWhitespace) }.joined(separator: "\n\n")
        guard !joined.isEmpty else { return [] }
        return [Chunk(ordinal: 0, text: joined, tokenCount: counter.count(joined), page: text.sections.first?.page)]
    }
}
