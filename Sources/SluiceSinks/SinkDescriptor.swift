import SluiceCore

/// What the pipeline needs to know about one kind of store before it has one: its name in `sink.kind`,
/// the `sink` keys it reads, how to check its settings and how to build it. What it needs to know of a
/// store it has (remote or not, its availability check, the filters it can push down, its search modes)
/// the store answers itself (``VectorSink``).
///
/// Every store Sluice ships is described in `SinkDescriptor+Standard.swift`; a library user adds a kind
/// with ``SinkFactory/register(_:)``, with no list of kinds to edit anywhere.
public struct SinkDescriptor: Sendable {
    /// The name in `sink.kind`.
    public var kind: PipelineConfiguration.Sink.Kind
    /// The keys of the `sink` section this store reads (`url`, `table`, …; sections as `hnsw`), besides
    /// those every store honours (``SinkDescriptor/commonKeys``): `sluice check` names a key set in the
    /// pipeline file that the chosen store does not read.
    public var keys: Set<String>
    /// Checks the section's values without building anything or reaching any server (a malformed URL is
    /// the configuration's fault: exit 1, not a store that is down).
    public var validate: @Sendable (PipelineConfiguration.Sink) throws -> Void
    /// Builds the store (`readOnly`: for commands that only read it, as `search` and `export`).
    public var make: @Sendable (_ configuration: PipelineConfiguration, _ readOnly: Bool) throws -> any VectorSink
    /// Creates the store empty when it does not exist yet, for a reader that starts before the first run
    /// (`sluice serve` on a new deployment); nil for stores that need nothing (a server's collection is
    /// created by the first run, and reading it before answers "nothing stored yet").
    public var createIfMissing: (@Sendable (_ configuration: PipelineConfiguration) throws -> Void)?

    /// - Parameters:
    ///   - kind: The name in `sink.kind`.
    ///   - keys: The `sink` keys the store reads besides ``commonKeys``.
    ///   - validate: Checks the `sink` section without building anything; by default nothing is checked.
    ///   - createIfMissing: Creates the store empty for a reader that starts before the first run.
    ///   - make: Builds the store.
    public init(
        kind: PipelineConfiguration.Sink.Kind,
        keys: Set<String>,
        validate: @escaping @Sendable (PipelineConfiguration.Sink) throws -> Void = { _ in },
        createIfMissing: (@Sendable (_ configuration: PipelineConfiguration) throws -> Void)? = nil,
        make: @escaping @Sendable (_ configuration: PipelineConfiguration, _ readOnly: Bool) throws -> any VectorSink
    ) {
        self.kind = kind
        self.keys = keys
        self.validate = validate
        self.createIfMissing = createIfMissing
        self.make = make
    }

    /// The `sink` keys the pipeline itself reads whatever the store: the kind, the write batches' bounds
    /// (each store also applies its own limit) and the metric `sluice check` compares.
    public static let commonKeys: Set<String> = ["kind", "batch", "max_batch_bytes", "metric"]
}
