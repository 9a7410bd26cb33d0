extension PipelineConfiguration {
    /// `run`: how a run behaves as a whole.
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
}

extension PipelineConfiguration.Run {
    /// Reads `run.*` over the defaults.
    init(section: ConfigurationSection) throws {
        self.init()
        var s = section
        prune = try s.bool("prune") ?? prune
        maxDeleteFraction = try s.number("max_delete_fraction", min: 0, max: 1) ?? maxDeleteFraction
        buffer = try s.int("buffer", min: 1, max: 65_536) ?? buffer
        upsertParallelism = try s.int("upsert_parallelism", min: 1, max: 256) ?? upsertParallelism
        try s.finish()
    }
}
