import Foundation
import SluiceState

extension GenerationComparison {
    /// What the bar was: `--min-ndcg X` or the active generation's figure.
    package var bar: String {
        minimum.map { "--min-ndcg \(Self.figure($0))" }
            ?? "the active generation \(active)'s \(Self.figure(activeNDCG))"
    }

    /// `candidate g1 nDCG@10 0.812, active g0 0.790 (hybrid, 12 queries of FILE)`.
    package var summary: String {
        "candidate \(candidate) nDCG@\(k) \(Self.figure(candidateNDCG)), active \(active) \(Self.figure(activeNDCG))"
            + " (\(configuration), \(queries) queries of \(queryFile)"
            + (minimum.map { ", bar --min-ndcg \(Self.figure($0))" } ?? "") + ")"
    }

    /// `sluice generation status`'s line: the figures and what was done.
    package var statusLine: String {
        "last comparison: \(summary): \(passed ? "promoted" : "refused")"
    }

    /// A figure as the messages show it: three decimals, as `sluice eval`'s table.
    package static func figure(_ value: Double) -> String { String(format: "%.3f", value) }
}
