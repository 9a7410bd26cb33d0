/// Everything besides a document's bytes that decides what an ``Extractor`` produces: its name, a
/// version of its code's output, and the pipeline settings it reads. Two extractions with the same
/// content hash and identity give the same text, so the persistent extraction cache is keyed by both.
///
/// - Important: bump ``version`` whenever a change to the extractor (or to the clean-up it applies) can
///   change its output, and list in `settings` every setting that can; never a secret (a password's
///   environment-variable *name* at most, and only if it changes the output).
public struct ExtractorIdentity: Sendable, Hashable, CustomStringConvertible {
    public var name: String
    public var version: Int
    /// XXH3-64 of the settings, as 16 hex digits.
    public var settingsDigest: String

    /// - Parameter settings: the settings that affect the output (and library versions that can), by name.
    public init(name: String, version: Int, settings: [String: String]) {
        self.name = name
        self.version = version
        let canonical = settings.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "\n")
        let digits = String(xxh3_64(canonical), radix: 16)
        settingsDigest = String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// `name@version:digest`.
    public var description: String { "\(name)@\(version):\(settingsDigest)" }
}
