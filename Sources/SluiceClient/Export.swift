/// `GET /v1/export`: one page of the index's records readable by the caller, in document key (bytes) then
/// ordinal order, each as `sluice export` writes it.
public struct ExportPage: Sendable, Hashable, Codable {
    public var records: [ExportedRecord]
    /// Pass as `cursor` for the next page; nil on the last.
    public var nextCursor: String?
    /// Records of this page left out because their vectors are not finite (`sluice run --reembed`).
    public var skipped: Int
    /// The records of this page's range the store could not read (a damaged local store), each named once
    /// in a whole export: on the page whose range (after its cursor, up to its last record; to the end on
    /// the last page) holds it. Nil for a caller restricted by access control, who is told nothing of them,
    /// and from an older server.
    public var unreadable: [SkippedRecord]?

    enum CodingKeys: String, CodingKey {
        case records, skipped, unreadable
        case nextCursor = "next_cursor"
    }
}

/// One record of the store: its id, document, ordinal, text, vector and metadata.
public struct ExportedRecord: Sendable, Hashable, Codable {
    public var id: String
    public var documentKey: String
    public var ordinal: Int
    public var text: String
    public var vector: [Float]
    public var metadata: [String: JSONValue]

    enum CodingKeys: String, CodingKey {
        case id, ordinal, text, vector, metadata
        case documentKey = "document_key"
    }
}
