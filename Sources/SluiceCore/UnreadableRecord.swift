/// A record a store holds but cannot read (the local store's records whose bytes do not decode:
/// docs/RELIABILITY.md, "A damaged record in the local store"): what `sluice verify` reports, and what a
/// search that skipped it says in its answer.
public struct UnreadableRecord: Sendable, Hashable, Codable {
    /// The record's id.
    public var id: VectorID
    /// The record's document key, when it can still be read from the record's bytes; nil when it cannot.
    public var documentKey: String?
    /// Why it cannot be read (the decoding error's message).
    public var reason: String

    /// A record `id` of `documentKey` (nil when unknown) that cannot be read for `reason`.
    public init(id: VectorID, documentKey: String?, reason: String) {
        self.id = id
        self.documentKey = documentKey
        self.reason = reason
    }

    private enum CodingKeys: String, CodingKey {
        case id, reason
        case documentKey = "document_key"
    }
}
