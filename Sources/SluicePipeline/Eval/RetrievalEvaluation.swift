import SluiceCore

/// Scores search configurations on a judged query set (`sluice eval`, docs/USAGE.md "Retrieval quality"):
/// every query goes through ``Searcher/search(_:)`` — the path `sluice search` takes, copies collapsed — once
/// per configuration, and its results are scored by ``RetrievalMetrics``.
///
/// A configuration is a name and the search options it sets (the mode, and whatever other option a
/// ``SearchQuery`` carries): scoring a new option side by side with the others is one more
/// ``Configuration`` in the list.
package struct RetrievalEvaluation: Sendable {
    /// One way of searching, scored on its own.
    package struct Configuration: Sendable, Hashable {
        /// The name the report shows (`hybrid`, `keyword`, …).
        package var name: String
        /// The options every query is searched with; its text and k are each query's. With
        /// ``SearchQuery/rerank`` the searcher's reranker re-scores the results (it must have one).
        package var options: SearchQuery

        package init(name: String, options: SearchQuery) {
            self.name = name
            self.options = options
        }

        /// A configuration that sets only the mode, named after it; the first stage alone (no reranker).
        package static func mode(_ mode: SearchMode) -> Configuration {
            var options = SearchQuery(text: "", mode: mode)
            options.rerank = false
            return Configuration(name: mode.rawValue, options: options)
        }

        /// The query for `text` with these options: copies collapsed, as `sluice search` does unless told not to.
        func query(_ text: String, k: Int) -> SearchQuery {
            var query = options
            query.text = text
            query.k = k
            return query
        }
    }

    package var searcher: Searcher
    /// The results looked at per query (recall@k, MRR and nDCG@k).
    package var k: Int

    package init(searcher: Searcher, k: Int = 10) {
        self.searcher = searcher
        self.k = k
    }

    /// Searches every query with every configuration and scores the results. A configuration that asks for
    /// the reranker (``SearchQuery/rerank``) searches through ``Searcher/searchOutcome(_:)`` and the report
    /// keeps, per query, whether the reranker ordered the results (``RetrievalReport/Scored/rerank``): a
    /// query it did not rerank (deadline, failure) is scored in the first stage's order and said so.
    ///
    /// - Parameter progress: Called after each query with the configuration's name and the count done.
    /// - Throws: What ``Searcher/search(_:)`` throws (an unreachable store: exit 6; a mode the store does
    ///   not have: usage), usage for a configuration that asks for a reranker the searcher does not have,
    ///   and `CancellationError`.
    package func evaluate(
        _ queries: [JudgedQuery],
        configurations: [Configuration],
        progress: (String, Int) -> Void = { _, _ in }
    ) async throws -> RetrievalReport {
        guard (1...SearchQuery.maxK).contains(k) else {
            throw SluiceError(.usage, "k must be between 1 and \(SearchQuery.maxK), not \(k)")
        }
        var report = RetrievalReport(k: k, queries: queries)
        for configuration in configurations {
            if configuration.options.rerank, searcher.reranking == nil {
                throw SluiceError(
                    .usage,
                    "\(configuration.name) asks for the reranker, and the pipeline has none (search.rerank)"
                )
            }
            // The report names the fusion a hybrid configuration used, the searcher's when it names none.
            var configuration = configuration
            if (configuration.options.mode ?? searcher.defaultMode) == .hybrid, configuration.options.fusion == nil {
                configuration.options.fusion = searcher.fusion
            }
            var scores: [RetrievalMetrics.QueryScore] = []
            var statuses: [RerankStatus?] = []
            for (index, judged) in queries.enumerated() {
                try Task.checkCancellation()
                let query = configuration.query(judged.query, k: k)
                // The first stage alone does not ask the reranker at all; the second says per query what it did.
                let outcome =
                    query.rerank
                    ? try await searcher.searchOutcome(query)
                    : SearchOutcome(results: try await searcher.search(query), rerank: nil)
                scores.append(
                    RetrievalMetrics.score(
                        outcome.results.map(RetrievalMetrics.Retrieved.init),
                        relevant: judged.relevant,
                        k: k
                    )
                )
                statuses.append(outcome.rerank)
                progress(configuration.name, index + 1)
            }
            report.append(configuration, scores: scores, rerank: statuses)
        }
        return report
    }
}
