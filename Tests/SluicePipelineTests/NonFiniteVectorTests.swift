import Foundation
import SluiceCore
import SluiceState
import SluiceTesting
import Testing

@testable import SluicePipeline

/// An embedder (standing for any: remote, MiniLM, hash) whose vector for a text containing `marker` is
/// not finite: NaN, infinity, or values whose squares overflow float32 (a norm of infinity).
final class PoisoningEmbedder: Embedder {
    let inner = CountingEmbedder()
    let marker: String
    let poison: Float

    init(marker: String, poison: Float) {
        self.marker = marker
        self.poison = poison
    }

    var identity: EmbedderIdentity { inner.identity }
    var limits: EmbedderLimits { inner.limits }
    var tokenCounter: any TokenCounter { inner.tokenCounter }

    func embed(_ texts: [String]) async throws -> [[Float]] {
        var vectors = try await inner.embed(texts)
        for index in texts.indices where texts[index].contains(marker) {
            vectors[index] = vectors[index].map { _ in poison }
        }
        return vectors
    }
}

@Suite struct NonFiniteVectorTests {
    static func isFinite(_ vector: [Float]) -> Bool { vector.allSatisfy(\.isFinite) }

    @Test(
        "a vector that is not finite fails only its own document, never reaches the cache or the sink",
        arguments: [Float.nan, .infinity, -.infinity, 3e30]
    )
    func poisonedVectorFailsOnlyItsDocument(poison: Float) async throws {
        var harness = try PipelineHarness {
            $0.embed.batch = 64
            $0.embed.lingerMilliseconds = 500  // one batch for all documents
        }
        defer { harness.cleanUp() }
        harness.embedderOverride = PoisoningEmbedder(marker: "POISON", poison: poison)
        let keys = try TestCorpus.writeTextDocuments(count: 5, into: harness.source, paragraphs: 1)
        try "A short note that carries the POISON word.".write(
            to: harness.source.appendingPathComponent("poisoned.txt"),
            atomically: true,
            encoding: .utf8
        )
        let stats = try await harness.run()
        #expect(stats.documentsFailed == 1)
        #expect(stats.documentsUpserted == keys.count)
        #expect(harness.sink.records.allSatisfy { Self.isFinite($0.vector) })
        #expect(Set(harness.sink.records.map(\.documentKey)) == Set(keys))
        let checkpoint = try CheckpointStore(directory: URL(fileURLWithPath: harness.configuration.state))
        let failure = try #require(try checkpoint.document("poisoned.txt")?.error)
        #expect(failure.code == "embedding-failed")
        #expect(failure.message.contains("not finite"), "\(failure.message)")
        #expect(
            try checkpoint.cacheCount() == Set(harness.sink.records.map { Chunk.normalize($0.text) }).count,
            "the poisoned vector was cached"
        )
    }

    @Test("vectors poisoned in the cache by an older version are embedded again, not reused")
    func poisonedCacheEntriesAreNotReused() async throws {
        let harness = try PipelineHarness()
        defer { harness.cleanUp() }
        let keys = try TestCorpus.writeTextDocuments(count: 4, into: harness.source, paragraphs: 1)
        #expect(try await harness.run().documentsUpserted == keys.count)
        let texts = harness.sink.records.map(\.text)
        do {
            let checkpoint = try CheckpointStore(directory: URL(fileURLWithPath: harness.configuration.state))
            let poisoned = texts.map {
                (
                    ContentHash(utf8: Chunk.normalize($0)),
                    [Float](repeating: .nan, count: harness.embedder.identity.dimensions)
                )
            }
            try checkpoint.cacheEmbeddings(poisoned, embedder: harness.embedder.identity)
        }
        var options = RunOptions()
        options.reembed = true
        let stats = try await harness.run(options)
        #expect(stats.documentsUpserted == keys.count)
        #expect(stats.documentsFailed == 0)
        #expect(!harness.sink.records.isEmpty)
        #expect(
            harness.sink.records.allSatisfy { Self.isFinite($0.vector) },
            "a poisoned cached vector reached the sink"
        )
    }
}
