import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluicePipeline

/// `chunk.context` through a run: the embedder sees the title and heading path before each chunk's text,
/// the store keeps the chunk's own text, and the embedding cache and deduplication go by what was embedded.
@Suite struct ChunkContextPipelineTests {
    private static let body = "The gate opens when the lock is full and the water is level on both sides."

    /// A Markdown document with a front-matter title and the shared body under `heading`.
    private static func write(_ name: String, title: String, heading: String, in folder: URL) throws {
        try "---\ntitle: \(title)\n---\n# \(heading)\n\n\(body)\n"
            .write(to: folder.appendingPathComponent(name), atomically: true, encoding: .utf8)
    }

    @Test func theEmbedderSeesThePrefixAndTheStoreKeepsTheText() async throws {
        let harness = try PipelineHarness { $0.chunk.context = .headings }
        defer { harness.cleanUp() }
        try Self.write("a.md", title: "Upstream gates", heading: "Opening", in: harness.source)
        let stats = try await harness.run()
        #expect(stats.documentsUpserted == 1)

        let records = harness.sink.records
        try #require(records.count == 1)
        #expect(records[0].text == "# Opening\n\n\(Self.body)")
        #expect(!records[0].text.contains("›") && !records[0].text.contains("Upstream"))
        #expect(records[0].metadata["title"] == .string("Upstream gates"))
        #expect(
            Array(harness.embedder.timesEmbedded.keys) == ["Upstream gates › Opening\n\n# Opening\n\n\(Self.body)"]
        )
    }

    /// Identical text under different titles embeds apart (the hash covers the prefix); identical text with
    /// an identical prefix is embedded once. Without a context, the identical texts embed once.
    @Test(arguments: [PipelineConfiguration.Chunk.Context.title, .headings, .none])
    func identicalTextsEmbedOncePerPrefix(_ context: PipelineConfiguration.Chunk.Context) async throws {
        let harness = try PipelineHarness { $0.chunk.context = context }
        defer { harness.cleanUp() }
        try Self.write("a.md", title: "Upstream gates", heading: "Opening", in: harness.source)
        try Self.write("b.md", title: "Downstream gates", heading: "Opening", in: harness.source)
        try Self.write("c.md", title: "Upstream gates", heading: "Opening", in: harness.source)
        _ = try await harness.run()

        #expect(harness.sink.records.count == 3)
        #expect(Set(harness.sink.records.map(\.text)) == ["# Opening\n\n\(Self.body)"])
        let embedded = harness.embedder.timesEmbedded
        #expect(embedded.values.allSatisfy { $0 == 1 }, "\(embedded)")
        switch context {
        case .none: #expect(embedded.count == 1)
        case .title:
            #expect(
                Set(embedded.keys.map { $0.components(separatedBy: "\n\n")[0] }) == [
                    "Upstream gates", "Downstream gates",
                ]
            )
        case .headings:
            #expect(
                Set(embedded.keys.map { $0.components(separatedBy: "\n\n")[0] })
                    == ["Upstream gates › Opening", "Downstream gates › Opening"]
            )
        }
        // Two documents with one input share its vector; the third has its own.
        let vectors = Dictionary(grouping: harness.sink.records, by: \.documentKey).mapValues { $0[0].vector }
        #expect(vectors["a.md"] == vectors["c.md"])
        #expect((vectors["a.md"] == vectors["b.md"]) == (context == .none))
    }

    /// Turning the context on processes every document again (a dry run lists them first) and embeds the
    /// prefixed inputs; turning it off and on again takes every vector from the embedding cache.
    @Test func changingTheContextEmbedsAgainAndTheCacheKeepsBoth() async throws {
        var harness = try PipelineHarness()
        defer { harness.cleanUp() }
        try Self.write("a.md", title: "Upstream gates", heading: "Opening", in: harness.source)
        try Self.write("b.md", title: "Downstream gates", heading: "Closing", in: harness.source)
        _ = try await harness.run()
        #expect(harness.embedder.textsEmbedded == 2)
        let plain = Set(harness.sink.records.map(\.vector))

        harness.configuration.chunk.context = .headings
        let dry = try await harness.pipeline().dryRun()
        #expect(dry.metadataChanged.sorted() == ["a.md", "b.md"])
        #expect(dry.unchanged == 0)
        #expect(dry.shapingChanges == ["chunk.context (unset) → headings"] && dry.shapingChangesEmbed)
        let stats = try await harness.run()
        #expect(stats.documentsUpserted == 2 && stats.documentsSkipped == 0)
        #expect(harness.embedder.textsEmbedded == 4)
        #expect(Set(harness.sink.records.map(\.vector)).isDisjoint(with: plain))
        #expect(harness.sink.records.allSatisfy { !$0.text.contains("›") })

        harness.configuration.chunk.context = .none
        _ = try await harness.run()
        harness.configuration.chunk.context = .headings
        let again = try await harness.run()
        #expect(again.documentsUpserted == 2)
        #expect(harness.embedder.textsEmbedded == 4, "every vector came from the cache")
        #expect(again.cacheHits == 2)
    }

    /// The hash step's keys: the text's own hash without a prefix (an index built before the setting keeps
    /// its cache), the hash of prefix and text with one.
    @Test func theHashCoversThePrefix() {
        let context = ChunkContext(.headings, counter: WhitespaceTokenCounter(), maxInputTokens: 1000)
        let step = HashStep(context: context)
        let chunks = [
            Chunk(ordinal: 0, text: "same text", tokenCount: 2, headingPath: ["A"]),
            Chunk(ordinal: 1, text: "same text", tokenCount: 2, headingPath: ["B"]),
            Chunk(ordinal: 2, text: "same text", tokenCount: 2, headingPath: ["A"]),
            Chunk(ordinal: 3, text: "same text", tokenCount: 2),
        ]
        let prepared = step.hashed(chunks, key: "doc")
        #expect(prepared[0].hash != prepared[1].hash)
        #expect(prepared[0].hash == prepared[2].hash)
        #expect(prepared[3].hash == chunks[3].hash)
        #expect(prepared[0].hash == ContentHash(utf8: Chunk.normalize("A\n\nsame text")))
        #expect(prepared[0].embedText == "A\n\nsame text" && prepared[0].embedTokens == 3)
        #expect(prepared.map(\.chunk.text) == Array(repeating: "same text", count: 4))
        let none = HashStep(context: ChunkContext(.none, counter: WhitespaceTokenCounter(), maxInputTokens: 1000))
        #expect(none.hashed(chunks, key: "doc").map(\.hash) == chunks.map(\.hash))
        #expect(none.hashed(chunks, key: "doc").map(\.embedText) == chunks.map(\.text))
    }
}
