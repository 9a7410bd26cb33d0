import Foundation
import SluiceCore

/// What ``RetrievalEvaluation`` measured: per configuration, each query's score; means overall and per
/// kind of query, and the queries whose answers were not all found.
package struct RetrievalReport: Sendable {
    /// The results looked at per query.
    package var k: Int
    package var queries: [JudgedQuery]
    package var configurations: [Scored] = []

    /// One configuration's scores, in the queries' order.
    package struct Scored: Sendable {
        package var configuration: RetrievalEvaluation.Configuration
        package var scores: [RetrievalMetrics.QueryScore]
        /// Per query, in the same order, what the reranker did (nil: the first stage alone, no reranker asked).
        package var rerank: [RerankStatus?]
        /// The index generation searched, when the report scores generations (`sluice eval --generation`).
        package var generation: Generation?

        package init(
            configuration: RetrievalEvaluation.Configuration,
            scores: [RetrievalMetrics.QueryScore],
            rerank: [RerankStatus?]? = nil
        ) {
            self.configuration = configuration
            self.scores = scores
            self.rerank = rerank ?? Array(repeating: nil, count: scores.count)
        }

        /// The reranker's model when this configuration asked for it.
        package var rerankModel: String? { rerank.lazy.compactMap { $0?.model }.first }
    }

    /// An index generation a configuration searched (docs/GENERATIONS.md).
    package struct Generation: Sendable, Hashable {
        /// `active` or `candidate`.
        package var role: String
        /// `g0`, `g1`, …
        package var id: String

        package init(role: String, id: String) {
            self.role = role
            self.id = id
        }

        /// `candidate g1`.
        package var label: String { "\(role) \(id)" }
    }

    /// Marks every configuration as searching `generation`.
    package mutating func label(_ generation: Generation) {
        for index in configurations.indices { configurations[index].generation = generation }
    }

    /// Adds `other`'s configurations (scored on the same queries with the same k: another generation) after
    /// this report's.
    package mutating func append(contentsOf other: RetrievalReport) {
        precondition(other.k == k && other.queries == queries, "reports of different query sets")
        configurations += other.configurations
    }

    /// A query the reranker did not order (its deadline passed, it failed): scored in the first stage's order.
    package struct NotReranked: Sendable, Hashable {
        package var query: JudgedQuery
        package var status: RerankStatus
    }

    /// Means over a set of queries.
    package struct Summary: Sendable, Hashable {
        package var queries: Int
        /// Recall at each of ``RetrievalReport/cutoffs``, in that order.
        package var recall: [Double]
        package var meanReciprocalRank: Double
        package var ndcg: Double
    }

    /// A query with an entry that no result within k hit.
    package struct Miss: Sendable, Hashable {
        package var query: JudgedQuery
        package var score: RetrievalMetrics.QueryScore
    }

    package init(k: Int, queries: [JudgedQuery]) {
        self.k = k
        self.queries = queries
    }

    mutating func append(
        _ configuration: RetrievalEvaluation.Configuration,
        scores: [RetrievalMetrics.QueryScore],
        rerank: [RerankStatus?]
    ) {
        configurations.append(Scored(configuration: configuration, scores: scores, rerank: rerank))
    }

    /// The ranks recall is reported at: 5 and k (k alone when it is 5 or less).
    package var cutoffs: [Int] { k > 5 ? [5, k] : [k] }

    /// "all", then the kinds of the queries, sorted.
    package var kinds: [String] { ["all"] + Set(queries.compactMap(\.kind)).sorted() }

    /// The means of `scored` over the queries of `kind` ("all": every query); nil when none is of it.
    package func summary(_ scored: Scored, kind: String) -> Summary? {
        let picked = zip(queries, scored.scores).filter { kind == "all" || $0.0.kind == kind }.map(\.1)
        guard !picked.isEmpty else { return nil }
        func mean(_ value: (RetrievalMetrics.QueryScore) -> Double) -> Double {
            picked.reduce(0) { $0 + value($1) } / Double(picked.count)
        }
        return Summary(
            queries: picked.count,
            recall: cutoffs.map { cutoff in mean { $0.recall(at: cutoff) } },
            meanReciprocalRank: mean(\.reciprocalRank),
            ndcg: mean(\.ndcg)
        )
    }

    /// The queries of `scored` with an entry not hit within k, in the file's order.
    package func misses(_ scored: Scored) -> [Miss] {
        zip(queries, scored.scores).filter { $0.1.entryRanks.contains(nil) }.map { Miss(query: $0.0, score: $0.1) }
    }

    /// The queries of `scored` whose results the reranker did not order, in the file's order.
    package func notReranked(_ scored: Scored) -> [NotReranked] {
        zip(queries, scored.rerank).compactMap { query, status in
            guard let status, !status.applied else { return nil }
            return NotReranked(query: query, status: status)
        }
    }
}
