/// The store's own upkeep that failed while a sink was open (the local store's keyword merges): work that
/// never changes what searches answer, so its failures do not fail documents, but are counted and reported
/// (docs/RELIABILITY.md, "The local store's keyword merges").
public struct SinkUpkeepFailures: Sendable, Hashable, Codable {
    /// Upkeep passes that failed.
    public var count = 0
    /// The first reason met of each kind (`map-full`, `disk-full`, `failed`): bounded labels, and messages
    /// that carry no secret (a path and LMDB's words).
    public var reasons: [String: String] = [:]
    /// Whether the sink stopped trying (too many failures in a row, or a fatal one) until it is opened again.
    public var stopped = false

    /// No failure.
    public init() {}
}
