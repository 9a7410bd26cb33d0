import SluiceCore
import Testing

@testable import SluicePipeline

/// The configurations `sluice eval` scores side by side: modes, hybrid per fusion, the reranker's stages.
@Suite struct RetrievalEvaluationConfigurationsTests {
    @Test func modesAloneKeepTheirNames() throws {
        let configurations = try RetrievalEvaluation.configurations(modes: [.vector, .keyword, .hybrid])
        #expect(configurations.map(\.name) == ["vector", "keyword", "hybrid"])
        #expect(configurations.map(\.options.mode) == [.vector, .keyword, .hybrid])
        // The first stage alone: no configuration asks for a reranker, and hybrid's fusion is the searcher's.
        #expect(configurations.allSatisfy { !$0.options.rerank && $0.options.fusion == nil })
    }

    @Test func hybridOncePerFusion() throws {
        let configurations = try RetrievalEvaluation.configurations(
            modes: [.keyword, .hybrid],
            fusions: [.score(vectorWeight: 0.3), .rrf(k: 20)]
        )
        #expect(configurations.map(\.name) == ["keyword", "hybrid-score", "hybrid-rrf"])
        #expect(configurations.map(\.options.fusion) == [nil, .score(vectorWeight: 0.3), .rrf(k: 20)])
        #expect(configurations.allSatisfy { $0.options.mode != .hybrid || $0.options.fusion != nil })
    }

    @Test func aFusionWithoutHybridIsAUsageError() {
        #expect {
            _ = try RetrievalEvaluation.configurations(modes: [.vector, .keyword], fusions: [.rrf()])
        } throws: { ($0 as? SluiceError)?.code == .usage }
    }

    @Test func theRerankersStages() throws {
        let reranked = try RetrievalEvaluation.configurations(modes: [.keyword, .hybrid], rerank: .reranked)
        #expect(reranked.map(\.name) == ["keyword+rerank", "hybrid+rerank"])
        #expect(reranked.allSatisfy { $0.options.rerank })
        let both = try RetrievalEvaluation.configurations(modes: [.hybrid], fusions: [.rrf()], rerank: .both)
        #expect(both.map(\.name) == ["hybrid-rrf", "hybrid-rrf+rerank"])
        #expect(both.map(\.options.rerank) == [false, true])
        #expect(both.map(\.options.fusion) == [.rrf(), .rrf()])
    }
}
