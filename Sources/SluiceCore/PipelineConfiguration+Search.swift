extension PipelineConfiguration {
    /// `search`: how queries are answered (`sluice search`, `ask`, `sluice serve`), beyond what the store does.
    public struct Search: Sendable, Hashable {
        /// The optional second stage: a reranker that re-scores the first stage's best results.
        public var rerank = Rerank()
        /// How hybrid search merges the vector and keyword rankings when a query names no rule
        /// (`search.fusion` with its parameter).
        public var fusion: SearchFusion = .default
        /// The RRF constant `rrf` uses, here or named by a query (`search.rrf_k`).
        public var rrfK = SearchFusion.defaultRRFK
        /// The vector ranking's largest weight `score` uses, here or named by a query (`search.vector_weight`).
        public var vectorWeight = SearchFusion.defaultVectorWeight
        /// The vector ranking's largest weight `score` uses for a question in words
        /// (`search.question_weight`).
        public var questionWeight = SearchFusion.defaultQuestionWeight

        public init() {}

        /// The rule `name` names (`--fusion`, the API's `fusion`) with this section's parameters; nil for
        /// an unknown name.
        public func fusion(named name: String) -> SearchFusion? {
            switch name {
            case "score": .score(vectorWeight: vectorWeight, questionWeight: questionWeight)
            case "rrf": .rrf(k: rrfK)
            default: nil
            }
        }
    }
}

extension PipelineConfiguration.Search {
    /// Reads `search.*` over the defaults:
    /// - `fusion`: `score` (default) or `rrf`;
    /// - `rrf_k`: number 0…1000000, default 10: the RRF constant;
    /// - `vector_weight`: number 0…1, default 0.15: the vector ranking's largest weight in score fusion;
    /// - `question_weight`: number 0…1, default 0.8: that weight for a question in words (nine or more words,
    ///   each plain letters);
    /// - `rerank`: the second stage (``Rerank``).
    init(section: ConfigurationSection) throws {
        self.init()
        var s = section
        if let r = try s.section("rerank") { rerank = try Rerank(section: r) }
        let name = try s.string("fusion", oneOf: SearchFusion.names) ?? fusion.name
        rrfK = try s.number("rrf_k", min: 0, max: 1_000_000) ?? rrfK
        vectorWeight = try s.number("vector_weight", min: 0, max: 1) ?? vectorWeight
        questionWeight = try s.number("question_weight", min: 0, max: 1) ?? questionWeight
        fusion = fusion(named: name) ?? fusion
        try s.finish()
    }
}
