import Foundation
import SluiceCore
import SluiceState

extension IndexGenerations {
    /// What `sluice generation promote` compares the generations on (docs/GENERATIONS.md, "The quality
    /// gate"): a judged query file, scored as `sluice eval` scores it in the pipeline's search mode.
    package struct QualityGate: Sendable {
        /// The judged queries (``JudgedQuery/load(_:)``).
        package var queries: [JudgedQuery]
        /// The file they were read from, as the messages and the manifest name it.
        package var file: String
        /// `--min-ndcg`: the bar the candidate's nDCG@k must reach instead of the active generation's.
        package var minimum: Double?
        /// The results looked at per query.
        package var k: Int

        package init(queries: [JudgedQuery], file: String, minimum: Double? = nil, k: Int = 10) {
            self.queries = queries
            self.file = file
            self.minimum = minimum
            self.k = k
        }
    }

    /// The settings of `generation`: those of `base` (the pipeline file's and the command line's) with the
    /// generation's overrides (`load(extra)` loads the pipeline file with `extra` overrides before the
    /// command line's), pointed at its store and document records.
    package func configuration(
        of generation: GenerationManifest.Generation,
        base: PipelineConfiguration,
        load: ([String]) throws -> PipelineConfiguration
    ) throws -> PipelineConfiguration {
        var configuration = generation.overrides.isEmpty ? base : try load(generation.overrides)
        try apply(generation, to: &configuration)
        return configuration
    }

    /// Scores the active generation and the candidate on `gate`'s queries, each searched as `sluice search`
    /// searches it with its own embedder and store (the pipeline's default mode, fusion and reranker), and
    /// says whether the candidate reaches the bar (``GenerationComparison/passed``).
    /// - Throws: what ``RetrievalEvaluation/evaluate(_:configurations:progress:)`` throws (an unreadable
    ///   store, an embedder that cannot be loaded), ``SluiceError/Code/usage`` for an empty query set.
    package func compare(
        active: GenerationManifest.Generation,
        candidate: GenerationManifest.Generation,
        gate: QualityGate,
        base: PipelineConfiguration,
        load: ([String]) throws -> PipelineConfiguration
    ) async throws -> GenerationComparison {
        var figures: [Double] = []
        var scored = ""
        for generation in [active, candidate] {
            let configuration = try self.configuration(of: generation, base: base, load: load)
            let searcher = try RetrievalEvaluation.pipelineSearcher(configuration: configuration)
            let configurations = try RetrievalEvaluation.configurations(
                modes: [searcher.defaultMode],
                rerank: searcher.reranking == nil ? .firstStage : .reranked
            )
            let report = try await RetrievalEvaluation(searcher: searcher, k: gate.k)
                .evaluate(gate.queries, configurations: configurations)
            guard let first = report.configurations.first, let summary = report.summary(first, kind: "all") else {
                throw SluiceError(.usage, "\(gate.file) holds no query to compare the generations on")
            }
            figures.append(summary.ndcg)
            scored = first.configuration.name
        }
        return GenerationComparison(
            active: active.id,
            candidate: candidate.id,
            configuration: scored,
            k: gate.k,
            queryFile: gate.file,
            queries: gate.queries.count,
            activeNDCG: figures[0],
            candidateNDCG: figures[1],
            minimum: gate.minimum
        )
    }
}
