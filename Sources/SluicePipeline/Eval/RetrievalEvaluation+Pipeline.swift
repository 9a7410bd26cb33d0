import SluiceCore

extension RetrievalEvaluation {
    /// The searcher `sluice eval` and the promote quality gate score: the pipeline's store (read-only) and
    /// embedder, searched as `sluice search` searches (the pipeline's fusion, and its reranker unless
    /// `rerank` is false).
    /// - Parameter rerank: nil or true: with the pipeline's reranker (`search.rerank`) when it has one;
    ///   false: the first stage alone.
    /// - Throws: ``SluiceError/Code/configuration`` for a provider, store or reranker that cannot be set up.
    package static func pipelineSearcher(configuration: PipelineConfiguration, rerank: Bool? = nil) throws -> Searcher {
        let components = try PipelineComponents.standard(configuration: configuration, readOnlySink: true)
        var searcher = Searcher(embedder: components.embedder, sink: components.sink)
        searcher.indexEmbedder = Searcher.recordedEmbedder(configuration: configuration)
        searcher.fusion = configuration.search.fusion
        if rerank != false { searcher.reranking = try SearchReranking(configuration: configuration) }
        return searcher
    }
}
