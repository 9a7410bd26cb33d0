/// One vector as a sink stores it: id, vector, text and metadata.
public struct VectorRecord: Sendable, Hashable, Codable {
    public var id: VectorID
    public var documentKey: String
    public var ordinal: Int
    public var text: String
    public var vector: [Float]
    /// Chunk metadata: page, heading path, offsets, document metadata (docs/CONFIGURATION.md lists the keys).
    public var metadata: [String: MetadataValue]

    public init(
        id: VectorID,
        documentKey: String,
        ordinal: Int,
        text: String,
        vector: [Float],
        metadata: [String: MetadataValue] = [:]
    ) {
        self.id = id
        self.documentKey = documentKey
        self.ordinal = ordinal
        self.text = text
        self.vector = vector
        self.metadata = metadata
    }
}

extension VectorRecord {
    /// JSON field names as in every Sluice output (`search --json`, `export`, the JSONL sink, the HTTP API).
    enum CodingKeys: String, CodingKey {
        case id, ordinal, text, vector, metadata
        case documentKey = "document_key"
        /// How files written before the names were unified spell it (still read).
        case legacyDocumentKey = "documentKey"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(VectorID.self, forKey: .id)
        documentKey =
            try container.decodeIfPresent(String.self, forKey: .documentKey)
            ?? container.decode(String.self, forKey: .legacyDocumentKey)
        ordinal = try container.decode(Int.self, forKey: .ordinal)
        text = try container.decode(String.self, forKey: .text)
        vector = try container.decode([Float].self, forKey: .vector)
        metadata = try container.decodeIfPresent([String: MetadataValue].self, forKey: .metadata) ?? [:]
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(documentKey, forKey: .documentKey)
        try container.encode(ordinal, forKey: .ordinal)
        try container.encode(text, forKey: .text)
        try container.encode(vector, forKey: .vector)
        try container.encode(metadata, forKey: .metadata)
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
