/// One vector as a sink stores it: id, vector, text and metadata.
public struct VectorRecord: Sendable, Hashable, Codable {
    public var id: VectorID
    public var documentKey: String
    public var ordinal: Int
    public var text: String
    public var vector: [Float]
    /// Chunk metadata: page, heading path, offsets, document metadata.
    public var metadata: [String: String]

    public init(
        id: VectorID,
        documentKey: String,
        ordinal: Int,
        text: String,
        vector: [Float],
        metadata: [String: String] = [:]
    ) {
        self.id = id
        self.documentKey = documentKey
        self.ordinal = ordinal
        self.text = text
        self.vector = vector
        self.metadata = metadata
    }
}

/// One result of a similarity search.
public struct SearchHit: Sendable, Hashable {
    public var score: Float
    public var record: VectorRecord

    public init(score: Float, record: VectorRecord) {
        self.score = score
        self.record = record
    }
}
