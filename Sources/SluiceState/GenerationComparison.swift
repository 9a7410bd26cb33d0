import Foundation

/// The quality gate's comparison of a candidate generation with the active one (`sluice generation promote`
/// with a judged query file, docs/GENERATIONS.md): both scored by `sluice eval` on the same queries, in the
/// pipeline's search mode, and whether the candidate passed. The manifest keeps the last one
/// (``GenerationManifest/comparison``), refused or promoted, for `sluice generation status`.
package struct GenerationComparison: Codable, Sendable, Hashable {
    /// The active generation when it was made (`g0`, …).
    package var active: String
    /// The candidate it scored.
    package var candidate: String
    /// The configuration scored: the pipeline's search mode (`hybrid`, `vector`), `+rerank` with a reranker.
    package var configuration: String
    /// The results looked at per query (nDCG@k).
    package var k: Int
    /// The judged query file, and how many queries it holds.
    package var queryFile: String
    package var queries: Int
    /// The mean nDCG@k of each generation.
    package var activeNDCG: Double
    package var candidateNDCG: Double
    /// `--min-ndcg`: the bar the candidate had to reach instead of the active generation's figure.
    package var minimum: Double?
    /// Whether the candidate passed (and was promoted, unless the switch itself failed).
    package var passed: Bool
    /// When it was made (seconds since 1970).
    package var at: Double

    /// The figures two equal generations give may differ in the last bits of a mean: a candidate within this of
    /// the bar reaches it.
    package static let tolerance = 1e-9

    /// Scores `candidateNDCG` against the bar: `minimum` when given, else `activeNDCG` (a candidate is
    /// refused when it is below, never when it is equal).
    package init(
        active: String,
        candidate: String,
        configuration: String,
        k: Int,
        queryFile: String,
        queries: Int,
        activeNDCG: Double,
        candidateNDCG: Double,
        minimum: Double?,
        at: Double = Date().timeIntervalSince1970
    ) {
        self.active = active
        self.candidate = candidate
        self.configuration = configuration
        self.k = k
        self.queryFile = queryFile
        self.queries = queries
        self.activeNDCG = activeNDCG
        self.candidateNDCG = candidateNDCG
        self.minimum = minimum
        self.passed = candidateNDCG + Self.tolerance >= (minimum ?? activeNDCG)
        self.at = at
    }
}
