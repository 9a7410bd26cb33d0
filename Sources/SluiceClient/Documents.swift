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

/// `GET /v1/documents/{key}`: the record and one page of its chunks in the store, by ordinal.
public struct DocumentDetail: Sendable, Hashable, Codable {
    public var document: DocumentSummary
    /// This page of the document's chunks, by ordinal. Nil when the store cannot list a document's records
    /// (`chunksUnavailable` says why).
    public var chunks: [StoredChunk]?
    public var chunksUnavailable: String?
    /// Whether more chunks follow this page (`nextCursor` is then set).
    public var truncated: Bool
    /// Pass as `chunkCursor` for the next page of chunks; nil on the last.
    public var nextCursor: String?

    public struct StoredChunk: Sendable, Hashable, Codable {
        public var id: String
        public var ordinal: Int
        public var text: String
        public var metadata: [String: JSONValue]
    }

    enum CodingKeys: String, CodingKey {
        case document, chunks, truncated
        case chunksUnavailable = "chunks_unavailable"
        case nextCursor = "next_cursor"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        document = try container.decode(DocumentSummary.self, forKey: .document)
        chunks = try container.decodeIfPresent([StoredChunk].self, forKey: .chunks)
        chunksUnavailable = try container.decodeIfPresent(String.self, forKey: .chunksUnavailable)
        // A server from before paging sent no `truncated`.
        truncated = try container.decodeIfPresent(Bool.self, forKey: .truncated) ?? false
        nextCursor = try container.decodeIfPresent(String.self, forKey: .nextCursor)
    }
}
