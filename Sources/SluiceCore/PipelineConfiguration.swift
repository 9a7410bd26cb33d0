import Foundation

/// Everything a run needs, as read from a pipeline file (see `PipelineConfiguration+Decoding.swift` for
/// the keys and their defaults).
public struct PipelineConfiguration: Sendable, Hashable {
    public struct Source: Sendable, Hashable {
        /// Root folder of the corpus; document keys are paths relative to it.
        public var path: String = "./samples"
        public var include: [String] = ["**/*"]
        public var exclude: [String] = ["**/.git/**", "**/.sluice/**"]
        /// Follow symbolic links (never outside the root, never in loops).
        public var followSymlinks: Bool = false
        public init() {}
    }

    public struct Extract: Sendable, Hashable {
        public var maxFileMB: Double = 200
        public var parallelism: Int = ProcessInfo.processInfo.activeProcessorCount
        /// Per-document time limit.
        public var timeoutSeconds: Double = 120
        /// DOCX limits and JSON fields (`PipelineConfiguration+Documents.swift`).
        public var docx = DOCX()
        public var json = JSON()
        public init() {}
    }

    public struct Chunk: Sendable, Hashable {
        /// Open-ended: `recursive` (sections never merged) or `structured` (small sections under one
        /// heading merged, splits preferred at headings, pages, paragraphs).
        public var strategy: String = "recursive"
        public var maxTokens: Int = 256
        public var overlapTokens: Int = 32
        public var parallelism: Int = ProcessInfo.processInfo.activeProcessorCount
        public init() {}
    }

    public struct Embed: Sendable, Hashable {
        /// Open-ended: `hash` or `minilm` for now.
        public var provider: String = "hash"
        public var model: String? = nil
        public var dimensions: Int = 384
        /// Most texts per request.
        public var batch: Int = 64
        /// Most tokens per request.
        public var maxBatchTokens: Int = 300_000
        /// How long a partial batch may wait for more chunks before it is sent.
        public var lingerMilliseconds: Int = 20
        /// Requests in flight at once.
        public var parallelism: Int = 2
        public init() {}
    }

    public struct Sink: Sendable, Hashable {
        /// Open-ended: `local` for now.
        public var kind: String = "local"
        public var path: String = ".sluice/index"
        /// Most records per write.
        public var batch: Int = 512
        public init() {}
    }

    public struct Run: Sendable, Hashable {
        /// Delete the vectors of documents that vanished from the source (full sync).
        public var prune: Bool = false
        /// A run that would delete more than this share of the stored vectors stops before deleting.
        public var maxDeleteFraction: Double = 0.2
        /// Capacity, in documents, of each buffer between two stages.
        public var buffer: Int = 16
        /// Writers to the sink at once.
        public var upsertParallelism: Int = 2
        public init() {}
    }

    public var source = Source()
    public var extract = Extract()
    public var chunk = Chunk()
    public var embed = Embed()
    public var sink = Sink()
    public var run = Run()
    /// Folder of the LMDB checkpoint.
    public var state: String = ".sluice/state"
    /// The file the configuration came from, if any (relative paths resolve against its folder).
    public var baseDirectory: URL? = nil

    public init() {}

    /// Resolves a configured path: absolute paths as they are, relative ones against the pipeline file's
    /// folder (or the working directory when there is no file).
    public func resolve(_ path: String) -> URL {
        let expanded = (path as NSString).expandingTildeInPath
        if expanded.hasPrefix("/") { return URL(fileURLWithPath: expanded).standardizedFileURL }
        let base = baseDirectory ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        return base.appendingPathComponent(expanded).standardizedFileURL
    }
}
