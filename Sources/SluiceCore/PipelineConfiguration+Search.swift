/// `search`: how queries are answered (`sluice search`, `ask`, `sluice serve`), beyond what the store does.
extension PipelineConfiguration {
    public struct Search: Sendable, Hashable {
        /// The optional second stage: a reranker that re-scores the first stage's best results.
        public var rerank = Rerank()

        public init() {}
    }
}

extension PipelineConfiguration.Search {
    /// Reads `search.*` over the defaults.
    init(section: ConfigurationSection) throws {
        self.init()
        var s = section
        if let r = try s.section("rerank") { rerank = try Rerank(section: r) }
        try s.finish()
    }
}
