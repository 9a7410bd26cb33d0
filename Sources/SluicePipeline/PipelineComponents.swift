import SluiceCore
import SluiceExtract

/// The pluggable parts of a pipeline: how text is extracted and chunked, the embedder and the sink.
public struct PipelineComponents: Sendable {
    public var extractors: ExtractorRegistry
    public var chunker: any Chunker
    public var embedder: any Embedder
    public var sink: any VectorSink
    /// Settings the components had to adjust to fit each other (`chunk.max_tokens` above the embedder's
    /// limit), said at the start of a run and by `sluice check`, never silently.
    public var adjustments: [String] = []

    public init(extractors: ExtractorRegistry, chunker: any Chunker, embedder: any Embedder, sink: any VectorSink) {
        self.extractors = extractors
        self.chunker = chunker
        self.embedder = embedder
        self.sink = sink
    }
}

/// Choices of one invocation that are not pipeline settings.
public struct RunOptions: Sendable, Hashable {
    /// Overrides `run.prune` when set.
    public var prune: Bool?
    /// Process only documents whose last attempt failed.
    public var retryFailed = false
    /// Allow prune to delete more than `run.max_delete_fraction` of the store.
    public var allowMassDelete = false
    /// Forget every vector and embed everything again (needed to change the embedder).
    public var reembed = false
    /// The part of the corpus this run owns (`--shard K/N`); the whole corpus by default.
    public var shard: Shard = .whole
    /// Where the embed stage appends the chunk hashes it sends to the embedder (diagnostics, tests).
    public var embedAuditLog: String?

    public init() {}
}

/// A live view of a run, for progress lines.
public struct RunProgress: Sendable {
    public var elapsedSeconds: Double
    public var scanned: Int
    public var stats: RunStats
    public var inFlight: Int
    /// The documents of the run, once the scan has counted them all (nil before); see RunProgress+Figures.swift.
    public var total: Int?

    public init(elapsedSeconds: Double, scanned: Int, stats: RunStats, inFlight: Int, total: Int? = nil) {
        self.elapsedSeconds = elapsedSeconds
        self.scanned = scanned
        self.stats = stats
        self.inFlight = inFlight
        self.total = total
    }
}
