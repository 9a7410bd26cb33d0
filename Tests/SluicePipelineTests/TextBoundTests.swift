import Foundation
import SluiceCore
import SluiceExtract
import SluiceTesting
import Testing

@testable import SluicePipeline

/// `extract.max_text_mb` in a run (issue 37): a document whose text multiplies past it fails alone with
/// `text-too-large` (the run exits 2), is a known failure until the setting changes, and is indexed once
/// the bound is raised above it; a heading repeated by every chunk counts once per chunk. The bound is on what
/// a file multiplies into: a file is always allowed four times its own size (a large text, CSV or JSON Lines
/// file is not refused for its size, which `extract.max_file_mb` bounds).
@Suite struct TextBoundTests {
    @Test func aLargeFileIsAllowedTextInProportionToItsSize() async throws {
        var harness = try PipelineHarness()
        defer { harness.cleanUp() }
        harness.extractors = ExtractorRegistry.standard(configuration: harness.configuration.extract)
        harness.configuration.extract.maxTextMB = 1
        // 1.5 MB of plain text and a 1.2 MB CSV whose header names repeat before each value (about twice the file):
        // both past the 1 MB setting, neither past four times its own size.
        let paragraph = String(repeating: "Plain words of a long manual, line after line. ", count: 20) + "\n\n"
        let text = String(repeating: paragraph, count: (3 << 19) / paragraph.utf8.count + 1)
        try Data(text.utf8).write(to: harness.source.appendingPathComponent("manual.txt"))
        var csv = "identifier,quantity,warehouse\n"
        var row = 0
        while csv.utf8.count < 1_250_000 {
            csv += "item-\(row),\(row % 97),north-\(row % 5)\n"
            row += 1
        }
        try Data(csv.utf8).write(to: harness.source.appendingPathComponent("stock.csv"))

        let stats = try await harness.run()
        #expect(stats.documentsFailed == 0 && stats.documentsUpserted == 2, "\(stats)")
        for key in ["manual.txt", "stock.csv"] {
            let record = try #require(try harness.record(key))
            #expect(record.status == .indexed, "\(key): \(String(describing: record.error))")
        }
    }

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
        #expect(record.error?.message.contains("its bound of 1.0 MB (extract.max_text_mb") == true)
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
