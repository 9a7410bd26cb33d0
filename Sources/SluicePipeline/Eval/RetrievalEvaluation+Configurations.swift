import SluiceCore

extension RetrievalEvaluation {
    /// Which stages of a search with a reranker (`search.rerank`) are scored.
    package enum RerankChoice: Sendable, Hashable {
        /// The first stage alone (`--no-rerank`, or no reranker).
        case firstStage
        /// The reranked results only, as `sluice search` returns them (a pipeline with a reranker, by default).
        case reranked
        /// Each configuration twice, the first stage beside the reranked results (`--rerank`).
        case both
    }

    /// The configurations `sluice eval` scores, in the order given: every mode; hybrid once per fusion
    /// (`hybrid-score`, `hybrid-rrf`; plain `hybrid` with the searcher's fusion when `fusions` is empty);
    /// and with a reranker, each of those reranked (`+rerank`) instead of or beside the first stage.
    ///
    /// - Parameters:
    ///   - modes: The modes, without repeats.
    ///   - fusions: The hybrid fusions to score side by side (empty: the searcher's own, unnamed).
    ///   - rerank: Which stages to score.
    /// - Throws: ``SluiceError/Code/usage`` when fusions are named and no mode is hybrid.
    package static func configurations(
        modes: [SearchMode],
        fusions: [SearchFusion] = [],
        rerank: RerankChoice = .firstStage
    ) throws -> [Configuration] {
        if !fusions.isEmpty, !modes.contains(.hybrid) {
            throw SluiceError(.usage, "a fusion merges hybrid rankings: score hybrid too (--mode hybrid)")
        }
        var firstStage: [Configuration] = []
        for mode in modes {
            guard mode == .hybrid, !fusions.isEmpty else {
                firstStage.append(.mode(mode))
                continue
            }
            for fusion in fusions {
                var configuration = Configuration.mode(.hybrid)
                configuration.name = "hybrid-\(fusion.name)"
                configuration.options.fusion = fusion
                firstStage.append(configuration)
            }
        }
        var names = Set<String>()
        var configurations: [Configuration] = []
        for configuration in firstStage where names.insert(configuration.name).inserted {
            var reranked = configuration
            reranked.name += "+rerank"
            reranked.options.rerank = true
            switch rerank {
            case .firstStage: configurations.append(configuration)
            case .reranked: configurations.append(reranked)
            case .both: configurations += [configuration, reranked]
            }
        }
        return configurations
    }
}
