import SluiceState
import Testing

/// The quality gate's decision (docs/GENERATIONS.md, "The quality gate"): below the bar is refused, equal
/// passes; the bar is `--min-ndcg` when given, else the active generation's figure.
struct GenerationComparisonTests {
    static func comparison(active: Double, candidate: Double, minimum: Double? = nil) -> GenerationComparison {
        GenerationComparison(
            active: "g0",
            candidate: "g1",
            configuration: "hybrid",
            k: 10,
            queryFile: "judged.jsonl",
            queries: 3,
            activeNDCG: active,
            candidateNDCG: candidate,
            minimum: minimum
        )
    }

    @Test(
        arguments: [
            (0.8, 0.7, nil, false), (0.8, 0.8, nil, true), (0.8, 0.9, nil, true),
            (0.8, 0.7, 0.6, true), (0.5, 0.7, 0.75, false), (0.8, 0.8 - 1e-12, nil, true), (0, 0, 1, false),
        ] as [(Double, Double, Double?, Bool)]
    )
    func belowTheBarIsRefused(active: Double, candidate: Double, minimum: Double?, passed: Bool) {
        #expect(Self.comparison(active: active, candidate: candidate, minimum: minimum).passed == passed)
    }
}
