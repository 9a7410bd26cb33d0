extension PipelineConfiguration {
    /// `eval`: what `sluice eval` scores retrieval with (docs/USAGE.md, "Retrieval quality").
    public struct Eval: Sendable, Hashable {
        /// The judged query file `sluice eval` reads when `--queries` is not given (relative to the
        /// pipeline file's folder); nil: `--queries` is required.
        public var queries: String? = nil
        public init() {}
    }
}

extension PipelineConfiguration.Eval {
    /// Reads `eval.*` over the defaults.
    init(section: ConfigurationSection) throws {
        self.init()
        var s = section
        queries = try s.string("queries") ?? queries
        try s.finish()
    }
}
