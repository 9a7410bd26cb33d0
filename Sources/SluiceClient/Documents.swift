/// `GET /v1/documents`: one page of the checkpoint's documents.
public struct DocumentPage: Sendable, Hashable, Codable {
    public var documents: [DocumentSummary]
    /// The cursor of the next page; nil on the last.
    public var nextCursor: String?

    enum CodingKeys: String, CodingKey {
        case documents
        case nextCursor = "next_cursor"
    }
}

/// A document as the checkpoint knows it.
public struct DocumentSummary: Sendable, Hashable, Codable {
    public var key: String
    /// `indexed`, `failed`, …
    public var status: String
    public var chunks: Int
    public var size: Int
    public var attempts: Int
    public var updatedAt: Double
    /// Why its last attempt failed.
    public var error: Failure?

    public struct Failure: Sendable, Hashable, Codable {
        public var code: String
        public var message: String
    }

    enum CodingKeys: String, CodingKey {
        case key, status, chunks, size, attempts, error
        case updatedAt = "updated_at"
    }
}

/// `GET /v1/documents/{key}`: the record and its chunks in the store.
public struct DocumentDetail: Sendable, Hashable, Codable {
    public var document: DocumentSummary
    /// Nil when the store cannot list a document's records (`chunksUnavailable` says why).
    public var chunks: [StoredChunk]?
    public var chunksUnavailable: String?

    public struct StoredChunk: Sendable, Hashable, Codable {
        public var id: String
        public var ordinal: Int
        public var text: String
        public var metadata: [String: JSONValue]
    }

    enum CodingKeys: String, CodingKey {
        case document, chunks
        case chunksUnavailable = "chunks_unavailable"
    }
}
