import Foundation
import SluiceCore
import SluiceExtract
import SluiceTesting
import Testing

@testable import SluicePipeline

/// `extract.max_text_mb` in a run (issue 37): a document whose text multiplies past it fails alone with
/// `text-too-large` (the run exits 2), is a known failure until the setting changes, and is indexed once
/// the bound is raised above it; a heading repeated by every chunk counts once per chunk.
@Suite struct TextBoundTests {
    @Test func aDocumentPastTheBoundFailsAloneAndIsRetriedWhenTheBoundIsRaised() async throws {
        var harness = try PipelineHarness()
        defer { harness.cleanUp() }
        harness.extractors = ExtractorRegistry.standard(configuration: harness.configuration.extract)
        harness.configuration.extract.maxTextMB = 1
        try TestCorpus.writeTextDocuments(count: 3, into: harness.source)
        // 64 cells naming one 64 KB shared string: 4 MB of text from a file of some 11 KB.
        let hostile = HostileDocuments.xlsxSharedString(stringBytes: 64 << 10, cells: 64)
        try Data(hostile.bytes).write(to: harness.source.appendingPathComponent(hostile.name))

        let first = try await harness.run()
        #expect(first.documentsFailed == 1 && first.documentsUpserted == 3 && first.exitCode == .documentsFailed)
        let record = try #require(try harness.record(hostile.name))
        #expect(record.error?.code == "text-too-large", "\(String(describing: record.error))")
        #expect(record.error?.message.contains("extract.max_text_mb (1.0 MB)") == true)
        #expect(!harness.sink.records.contains { $0.documentKey == hostile.name })

        // The same bytes and settings: a known failure, not extracted again.
        let second = try await harness.run()
        #expect(second.documentsFailed == 0 && second.documentsKnownFailures == 1)

        // A bound above its text: retried, and indexed whole.
        harness.configuration.extract.maxTextMB = 8
        let raised = try await harness.run()
        #expect(raised.documentsFailed == 0 && raised.documentsUpserted == 1, "\(raised)")
        #expect(harness.sink.records.contains { $0.documentKey == hostile.name })
    }

    @Test func aHeadingRepeatedByEveryChunkCountsOncePerChunk() async throws {
        var harness = try PipelineHarness()
        defer { harness.cleanUp() }
        harness.configuration.extract.maxTextMB = 1
        // 32 KB of heading over 64 KB of text: within the bound as text, some 50 MB in the records.
        let hostile = HostileDocuments.markdownHugeHeading(headingBytes: 32 << 10, bodyBytes: 64 << 10)
        try Data(hostile.bytes).write(to: harness.source.appendingPathComponent(hostile.name))
        try TestCorpus.writeTextDocuments(count: 2, into: harness.source)

        let stats = try await harness.run()
        #expect(stats.documentsFailed == 1 && stats.documentsUpserted == 2, "\(stats)")
        let record = try #require(try harness.record(hostile.name))
        #expect(record.error?.code == "text-too-large", "\(String(describing: record.error))")
        #expect(record.error?.message.contains("chunks") == true)
    }
}
