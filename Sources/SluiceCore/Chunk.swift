/// A piece of a document's text sized for the embedder, as the chunker produces it.
public struct Chunk: Sendable, Hashable {
    /// Position of the chunk within its document, from 0.
    public var ordinal: Int
    public var text: String
    /// Size in the embedder's tokens (as counted by the chunker's ``TokenCounter``).
    public var tokenCount: Int
    /// Offset of the chunk's first character within its section's text, in UTF-8 bytes.
    public var startOffset: Int
    public var page: Int?
    public var headingPath: [String]
    /// The section's position metadata (``TextSection/metadata``).
    public var metadata: [String: String]

    public init(
        ordinal: Int,
        text: String,
        tokenCount: Int,
        startOffset: Int = 0,
        page: Int? = nil,
        headingPath: [String] = [],
        metadata: [String: String] = [:]
    ) {
        self.metadata = metadata
        self.ordinal = ordinal
        self.text = text
        self.tokenCount = tokenCount
        self.startOffset = startOffset
        self.page = page
        self.headingPath = headingPath
    }

    /// XXH3-128 of the chunk's normalized text (whitespace runs folded to one space, trimmed):
    /// the key of the embedding cache.
    public var hash: ContentHash { ContentHash(utf8: Chunk.normalize(text)) }

    /// Folds runs of white space to one space and trims the ends.
    ///
    /// White space is ASCII's space, tab, line feed, vertical tab, form feed and carriage return, and every
    /// other scalar with the Unicode `White_Space` property. The UTF-8 bytes are read directly: an ASCII byte
    /// is judged by itself, and only a scalar beyond ASCII is decoded to ask for its property.
    public static func normalize(_ text: String) -> String {
        UTF8Decoding.withBytes(of: text) { source in
            guard !source.isEmpty else { return "" }
            // Never longer than the input: a run of white space becomes at most one space.
            return String(unsafeUninitializedCapacity: source.count) { out in
                var count = 0
                var pendingSpace = false
                var index = 0
                while index < source.count {
                    let (scalar, length) = UTF8Decoding.scalar(in: source, at: index)
                    let isSpace = length == 1 ? ASCII.isWhitespace(source[index]) : scalar.properties.isWhitespace
                    if isSpace {
                        pendingSpace = count > 0
                    } else {
                        if pendingSpace {
                            out[count] = 0x20
                            count += 1
                            pendingSpace = false
                        }
                        for offset in 0..<length { out[count + offset] = source[index + offset] }
                        count += length
                    }
                    index += length
                }
                return count
            }
        }
    }
}
