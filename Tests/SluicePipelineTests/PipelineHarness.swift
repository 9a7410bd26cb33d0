import Foundation
import Logging
import SluiceChunk
import SluiceCore
import SluiceExtract
import SluiceState
import SluiceTesting

@testable import SluicePipeline

/// A pipeline over a temporary corpus with injected embedder, sink and extractors.
struct PipelineHarness {
    let root: URL
    var configuration: PipelineConfiguration
    let embedder: CountingEmbedder
    /// Runs with this embedder instead of ``embedder`` when set.
    var embedderOverride: (any Embedder)?
    let sink: InMemorySink
    var extractors = ExtractorRegistry(extractors: [TextExtractor()])

    init(upsertDelay: Duration = .zero, _ adjust: (inout PipelineConfiguration) -> Void = { _ in }) throws {
        root = try TemporaryDirectory.make("pipeline-harness")
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("source"),
            withIntermediateDirectories: true
        )
        var configuration = PipelineConfiguration()
        configuration.source.path = root.appendingPathComponent("source").path
        configuration.source.include = ["**/*"]
        configuration.state = root.appendingPathComponent("state").path
        configuration.chunk.maxTokens = 40
        configuration.chunk.overlapTokens = 5
        adjust(&configuration)
        self.configuration = configuration
        embedder = CountingEmbedder()
        sink = InMemorySink(upsertDelay: upsertDelay)
    }

    var source: URL { root.appendingPathComponent("source") }

    func pipeline(_ options: RunOptions = RunOptions()) -> Pipeline {
        let chunker = RecursiveChunker(
            maxTokens: configuration.chunk.maxTokens,
            overlapTokens: configuration.chunk.overlapTokens,
            counter: embedder.tokenCounter
        )
        let components = PipelineComponents(
            extractors: extractors,
            chunker: chunker,
            embedder: embedderOverride ?? embedder,
            sink: sink
        )
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return Pipeline(configuration: configuration, components: components, options: options, logger: logger)
    }

    func run(_ options: RunOptions = RunOptions()) async throws -> RunStats {
        try await pipeline(options).run()
    }

    /// The checkpoint's record of a document, read as `status` reads it.
    func record(_ key: String) throws -> DocumentRecord? {
        try CheckpointStore(directory: URL(fileURLWithPath: configuration.state), readOnly: true).document(key)
    }

    func cleanUp() { TemporaryDirectory.remove(root) }
}
