import Foundation
import SluiceChunk
import SluiceCore
import SluiceEmbed
import SluiceExtract
import Testing

@testable import SluicePipeline

/// `embed.provider: minilm` in the standard components: the model's tokenizer sizes the chunks, and no
/// chunk of a real document is longer than the model's window.
@Suite struct MiniLMComponentsTests {
    static let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("samples")

    func components(_ adjust: (inout PipelineConfiguration) -> Void = { _ in }) throws -> PipelineComponents {
        var configuration = PipelineConfiguration()
        configuration.embed.provider = .minilm
        configuration.sink.path =
            FileManager.default.temporaryDirectory.appendingPathComponent("minilm-sink-\(UUID().uuidString)").path
        adjust(&configuration)
        return try PipelineComponents.standard(configuration: configuration)
    }

    @Test(arguments: ["text/man-db-manual.txt", "markdown/systemd-CODING_STYLE.md", "text/sedfaq.txt"])
    func noChunkOfARealDocumentExceedsTheWindow(document: String) throws {
        let components = try components()
        let embedder = try #require(components.embedder as? MiniLMEmbedder)
        let chunker = try #require(components.chunker as? RecursiveChunker)
        #expect(chunker.maxTokens == 254, "chunk.max_tokens 256 is capped at the window less [CLS] and [SEP]")
        let url = Self.samples.appendingPathComponent(document)
        let extracted = try TextExtractor().extract(
            ExtractionInput(key: document, fileURL: url, bytes: Array(Data(contentsOf: url)))
        )
        let structured = try self.components { $0.chunk.strategy = .structured }
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
        let model = #expect(throws: SluiceError.self) { try components { $0.embed.model = "all-mpnet-base-v2" } }
        #expect(model?.code == .configuration)
        let dimensions = #expect(throws: SluiceError.self) { try components { $0.embed.dimensions = 768 } }
        #expect(dimensions?.code == .configuration)
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
        let make = { (tokens: Int) throws -> PipelineComponents in
            var configuration = PipelineConfiguration()
            configuration.embed.provider = .minilm
            configuration.chunk.maxTokens = tokens
            configuration.sink.path =
                FileManager.default.temporaryDirectory.appendingPathComponent("adjust-\(UUID().uuidString)").path
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
