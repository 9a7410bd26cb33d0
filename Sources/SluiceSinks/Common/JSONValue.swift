import SluiceCore

/// A JSON document built in code: the filter bodies the HTTP stores take (Qdrant's filter, Pinecone's
/// metadata filter, Chroma's `where`). Leaves are metadata values; a time encodes as its RFC 3339 text.
indirect enum JSONValue: Encodable, Sendable, Hashable {
    case object([String: JSONValue])
    case array([JSONValue])
    case value(MetadataValue)

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .object(let members): try container.encode(members)
        case .array(let items): try container.encode(items)
        case .value(let value): try container.encode(value)
        }
    }

    /// `{name: value}`, the shape of most conditions.
    static func member(_ name: String, _ value: JSONValue) -> JSONValue { .object([name: value]) }
}
