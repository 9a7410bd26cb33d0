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
    public static func normalize(_ text: String) -> String {
        var out = [UInt8]()
        out.reserveCapacity(text.utf8.count)
        var pendingSpace = false
        for scalar in text.unicodeScalars {
            let isSpace =
                scalar.value < 0x80
                ? (scalar.value == 0x20 || (scalar.value >= 0x09 && scalar.value <= 0x0D))
                : scalar.properties.isWhitespace
            if isSpace {
                pendingSpace = !out.isEmpty
            } else {
                if pendingSpace { out.append(0x20) }
                pendingSpace = false
                if scalar.value < 0x80 {
                    out.append(UInt8(scalar.value))
                } else {
                    UTF8.encode(scalar) { out.append($0) }
                }
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
