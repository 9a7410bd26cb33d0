/// Counts tokens the way the embedder will, so that chunks fit its window.
public protocol TokenCounter: Sendable {
    func count(_ text: Substring) -> Int
}

extension TokenCounter {
    public func count(_ text: String) -> Int { count(text[...]) }
}

/// Splits extracted text into chunks.
public protocol Chunker: Sendable {
    func chunk(_ text: ExtractedText) -> [Chunk]
}
