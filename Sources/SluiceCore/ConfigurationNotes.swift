/// What decoding a pipeline file noticed about the file itself rather than about the settings: the
/// deprecated keys it used and the keys it set. Kept beside the settings and never part of their
/// equality: a file that says `extract.docx.max_inflated_mb: 100` configures what one saying
/// `extract.office.max_inflated_mb: 100` does.
public struct ConfigurationNotes: Sendable, Hashable {
    /// One notice per deprecated key the file (or a `--set`) used, naming the key to use instead: the CLI
    /// prints them on stderr, `sluice check` lists them.
    public var deprecations: [String]
    /// The keys set, as dotted paths (`sink.table`, `sink.hnsw`, `sink.hnsw.m`).
    public var keysSet: Set<String>

    public init(deprecations: [String] = [], keysSet: Set<String> = []) {
        self.deprecations = deprecations
        self.keysSet = keysSet
    }

    /// Always equal: notes describe how the settings were written, not what they are.
    public static func == (lhs: ConfigurationNotes, rhs: ConfigurationNotes) -> Bool { true }

    public func hash(into hasher: inout Hasher) {}
}
