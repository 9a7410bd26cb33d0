import Foundation
import SluiceChunk
import SluiceCore
import SluiceEmbed
import SluiceExtract
import SluiceTesting
import Testing

@testable import SluicePipeline

/// `embed.provider: minilm` in the standard components: the model's tokenizer sizes the chunks, and no
/// chunk of a real document is longer than the model's window.
@Suite struct MiniLMComponentsTests {
    static let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("samples")

    /// The standard components for MiniLM, with a local store of their own inside `folder`.
    func components(
        in folder: URL,
        _ adjust: (inout PipelineConfiguration) -> Void = { _ in }
    ) throws -> PipelineComponents {
        var configuration = PipelineConfiguration()
        configuration.embed.provider = .minilm
        configuration.sink.path = folder.appendingPathComponent("sink-\(UUID().uuidString)").path
        adjust(&configuration)
        return try PipelineComponents.standard(configuration: configuration)
    }

    @Test(arguments: ["text/man-db-manual.txt", "markdown/systemd-CODING_STYLE.md", "text/sedfaq.txt"])
    func noChunkOfARealDocumentExceedsTheWindow(document: String) throws {
        let folder = try TemporaryDirectory.make("minilm-components")
        defer { TemporaryDirectory.remove(folder) }
        let components = try components(in: folder)
        let embedder = try #require(components.embedder as? MiniLMEmbedder)
        let chunker = try #require(components.chunker as? RecursiveChunker)
        #expect(chunker.maxTokens == 254, "chunk.max_tokens 256 is capped at the window less [CLS] and [SEP]")
        let url = Self.samples.appendingPathComponent(document)
        let extracted = try TextExtractor().extract(
            ExtractionInput(key: document, fileURL: url, bytes: Array(Data(contentsOf: url)))
        )
        let structured = try self.components(in: folder) { $0.chunk.strategy = .structured }
        let chunks = components.chunker.chunk(extracted) + structured.chunker.chunk(extracted)
        #expect(chunks.count > 20)
        var longest = 0
        for chunk in chunks {
            let ids = embedder.tokenizer.encode(chunk.text)
            let pieces = embedder.tokenizer.count(chunk.text)
            longest = max(longest, pieces)
            #expect(pieces <= 254, "chunk \(chunk.ordinal) has \(pieces) word pieces")
            #expect(ids.count == pieces + 2, "chunk \(chunk.ordinal) would be truncated")
            #expect(chunk.tokenCount == pieces)
        }
        #expect(longest > 200, "chunks should fill the window, the longest has \(longest) pieces")
    }

    @Test func refusesAnotherModelOrDimensionCount() throws {
        let folder = try TemporaryDirectory.make("minilm-components")
        defer { TemporaryDirectory.remove(folder) }
        let model = #expect(throws: SluiceError.self) {
            try components(in: folder) { $0.embed.model = "all-mpnet-base-v2" }
        }
        #expect(model?.code == .configuration)
        let dimensions = #expect(throws: SluiceError.self) { try components(in: folder) { $0.embed.dimensions = 768 } }
        #expect(dimensions?.code == .configuration)
    }

    @Test func int8IsAnEmbedderOfItsOwn() throws {
        let folder = try TemporaryDirectory.make("minilm-components")
        defer { TemporaryDirectory.remove(folder) }
        let int8 = try components(in: folder) { $0.embed.precision = .int8 }
        #expect(int8.embedder.identity.description == "minilm/all-MiniLM-L6-v2-int8@384")
        #expect((int8.embedder as? MiniLMEmbedder)?.precision == .int8)
        #expect(try components(in: folder).embedder.identity.description == "minilm/all-MiniLM-L6-v2@384")
        var hash = PipelineConfiguration.Embed()
        hash.provider = .hash
        hash.precision = .int8
        let refused = #expect(throws: SluiceError.self) { try PipelineComponents.makeEmbedder(hash) }
        #expect(refused?.code == .configuration)
        #expect(refused?.message.contains("embed.precision") == true)
    }

    /// Vectors of the int8 embedder are never mixed with fp32 ones in one sink: a state built with fp32
    /// refuses an int8 run (and the other way round) unless told to re-embed.
    @Test func switchingPrecisionIsRefusedUnlessReembedding() async throws {
        let base = try PipelineHarness()
        defer { base.cleanUp() }
        try "Compress the file with xz, then check the result.".write(
            to: base.source.appendingPathComponent("a.txt"),
            atomically: true,
            encoding: .utf8
        )
        let directory = MiniLMEmbedder.defaultDirectory()
        var fp32Harness = base
        fp32Harness.embedderOverride = try MiniLMEmbedder(directory: directory, threads: 1)
        var int8Harness = base
        int8Harness.embedderOverride = try MiniLMEmbedder(directory: directory, threads: 1, precision: .int8)
        let fp32 = fp32Harness
        let int8 = int8Harness
        #expect(try await fp32.run().documentsUpserted == 1)
        let refused = await #expect(throws: SluiceError.self) { try await int8.run() }
        #expect(refused?.code == .embedderMismatch)
        #expect(refused?.message.contains("all-MiniLM-L6-v2-int8") == true)
        var options = RunOptions()
        options.reembed = true
        #expect(try await int8.run(options).documentsUpserted == 1)
        let back = await #expect(throws: SluiceError.self) { try await fp32.run() }
        #expect(back?.code == .embedderMismatch)
    }

    @Test func theDefaultPipelineUsesMiniLM() throws {
        let file = Self.samples.deletingLastPathComponent().appendingPathComponent("Pipelines/default.yaml")
        let configuration = try PipelineConfiguration.load(file: file)
        #expect(configuration.embed.provider == .minilm)
    }
}

/// Issue 18: `chunk.max_tokens` above the embedder's limit is capped, and said (run warns, check prints).
@Suite struct ChunkSizeAdjustmentTests {
    @Test func aChunkSizeAboveTheModelsLimitIsCappedAndSaid() throws {
        let folder = try TemporaryDirectory.make("chunk-size-adjustment")
        defer { TemporaryDirectory.remove(folder) }
        let make = { (tokens: Int) throws -> PipelineComponents in
            var configuration = PipelineConfiguration()
            configuration.embed.provider = .minilm
            configuration.chunk.maxTokens = tokens
            configuration.sink.path = folder.appendingPathComponent("sink-\(tokens)").path
            return try PipelineComponents.standard(configuration: configuration)
        }
        let large = try make(100_000)
        #expect((large.chunker as? RecursiveChunker)?.maxTokens == 254)
        #expect(large.adjustments.count == 1)
        #expect(large.adjustments.first?.contains("chunk.max_tokens 100000") == true)
        #expect(large.adjustments.first?.contains("cut at 254") == true)
        #expect(try make(256).adjustments.isEmpty, "256 names MiniLM's window")
    }
}
