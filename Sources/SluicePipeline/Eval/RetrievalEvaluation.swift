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
        /// The options every query is searched with; its text and k are each query's.
        package var options: SearchQuery

        package init(name: String, options: SearchQuery) {
            self.name = name
            self.options = options
        }

        /// A configuration that sets only the mode, named after it.
        package static func mode(_ mode: SearchMode) -> Configuration {
            Configuration(name: mode.rawValue, options: SearchQuery(text: "", mode: mode))
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

    /// Searches every query with every configuration and scores the results.
    ///
    /// - Parameter progress: Called after each query with the configuration's name and the count done.
    /// - Throws: What ``Searcher/search(_:)`` throws (an unreachable store: exit 6; a mode the store does
    ///   not have: usage), and `CancellationError`.
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
            var scores: [RetrievalMetrics.QueryScore] = []
            for (index, judged) in queries.enumerated() {
                try Task.checkCancellation()
                let results = try await searcher.search(configuration.query(judged.query, k: k))
                scores.append(
                    RetrievalMetrics.score(
                        results.map(RetrievalMetrics.Retrieved.init),
                        relevant: judged.relevant,
                        k: k
                    )
                )
                progress(configuration.name, index + 1)
            }
            report.append(configuration, scores: scores)
        }
        return report
    }
}
