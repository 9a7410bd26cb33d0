import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluicePipeline

/// docs/DESIGN.md §12: a change of the settings that shape chunks is never ignored for unchanged files;
/// the index then equals a fresh run's under the new settings, and only new texts are embedded.
@Suite struct ShapingSettingsTests {
    @Test func aChunkingChangeProcessesEveryDocumentAgainAndEqualsAFreshRun() async throws {
        var harness = try PipelineHarness()
        defer { harness.cleanUp() }
        try TestCorpus.writeTextDocuments(count: 8, into: harness.source)
        _ = try await harness.run()
        let before = Set(harness.sink.records.map(\.text))

        harness.configuration.chunk.maxTokens = 25
        harness.configuration.chunk.overlapTokens = 3
        let embeddedBefore = harness.embedder.timesEmbedded
        let stats = try await harness.run()
        #expect(stats.documentsUpserted == 8 && stats.documentsSkipped == 0)

        var fresh = try PipelineHarness()
        defer { fresh.cleanUp() }
        try TestCorpus.writeTextDocuments(count: 8, into: fresh.source)
        fresh.configuration.chunk.maxTokens = 25
        fresh.configuration.chunk.overlapTokens = 3
        _ = try await fresh.run()
        #expect(harness.sink.records.map(\.id) == fresh.sink.records.map(\.id))
        #expect(harness.sink.records.map(\.text) == fresh.sink.records.map(\.text))
        // Texts the first chunking had already embedded are not embedded again.
        for (text, count) in harness.embedder.timesEmbedded where before.contains(text) {
            #expect(count == embeddedBefore[text], "\(text.prefix(40)) embedded again")
        }

        // The same settings again: nothing to do.
        let again = try await harness.run()
        #expect(again.documentsSkipped == 8)
    }

    @Test func changesAreListedByKey() {
        var old = PipelineConfiguration()
        old.chunk.maxTokens = 256
        var new = old
        new.chunk.maxTokens = 128
        new.extract.pdf.joinHyphens = false
        let changes = ShapingSettings(new).changes(from: ShapingSettings(text: ShapingSettings(old).text))
        #expect(changes == ["chunk.max_tokens 256 → 128", "extract.pdf.join_hyphens true → false"])
        #expect(ShapingSettings(old) == ShapingSettings(text: ShapingSettings(old).text))
    }
}
