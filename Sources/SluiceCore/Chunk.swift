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

    public init(
        ordinal: Int, text: String, tokenCount: Int, startOffset: Int = 0, page: Int? = nil,
        headingPath: [String] = []
    ) {
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
    public static func normalize(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        var pendingSpace = false
        for scalar in text.unicodeScalars {
            if scalar.properties.isWhitespace {
                pendingSpace = !out.isEmpty
            } else {
                if pendingSpace { out.unicodeScalars.append(" ") }
                pendingSpace = false
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
