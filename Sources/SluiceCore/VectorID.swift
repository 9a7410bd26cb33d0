/// The deterministic identity of one stored vector.
///
/// Derived from (document key, chunk ordinal, chunk hash), so that upserting the same chunk twice
/// overwrites rather than duplicates, and a changed chunk gets a new id (its old one is deleted as stale).
public struct VectorID: Hashable, Sendable, Codable, Comparable, CustomStringConvertible {
    /// 32 lowercase hex digits (an XXH3-128 digest).
    public var rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public init(documentKey: String, ordinal: Int, chunkHash: ContentHash) {
        let material = "\(documentKey)\u{0}\(ordinal)\u{0}\(chunkHash.hex)"
        self.rawValue = ContentHash(utf8: material).hex
    }

    /// The id as an RFC 4122-shaped UUID string (version nibble 8 = custom), for stores that require UUIDs.
    public var uuidString: String {
        var hex = Array(rawValue)
        hex[12] = "8"
        let s = String(hex)
        let parts = [
            s.prefix(8), s.dropFirst(8).prefix(4), s.dropFirst(12).prefix(4), s.dropFirst(16).prefix(4),
            s.dropFirst(20),
        ]
        return parts.joined(separator: "-")
    }

    public var description: String { rawValue }

    public static func < (lhs: VectorID, rhs: VectorID) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
