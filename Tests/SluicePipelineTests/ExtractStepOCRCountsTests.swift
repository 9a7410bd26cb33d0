import Foundation
import SluiceCore
import SluiceExtract
import SluiceTesting
import Testing

@testable import SluicePipeline

/// The run's OCR counters (`ocr_pages`, `ocr_skipped_pages`, `ocr_empty_pages` in the stats) and the
/// records' metadata, over the real PDF extractor on the committed samples.
@Suite struct ExtractStepOCRCountsTests {
    private func copySample(_ name: String, as key: String, into harness: PipelineHarness) throws {
        try FileManager.default.copyItem(
            at: StandInServer.repositoryRoot.appendingPathComponent("samples/pdf/\(name)"),
            to: harness.source.appendingPathComponent(key)
        )
    }

    @Test func theRunCountsPagesOCRdSkippedAndReadAsNothingOnlyWhenItExtractsThem() async throws {
        var harness = try PipelineHarness()
        defer { harness.cleanUp() }
        let engines = OCREnginePool(options: harness.configuration.extract.ocr)
        harness.extractors = ExtractorRegistry(extractors: [
            PDFExtractor(pdf: harness.configuration.extract.pdf, engines: engines)
        ])
        try copySample("pages-without-scans.pdf", as: "drawings.pdf", into: harness)
        try copySample("mixed-text-and-scan.pdf", as: "mixed.pdf", into: harness)

        let first = try await harness.run()
        #expect(first.documentsUpserted == 2)
        #expect(engines.recognitions == 2)
        #expect(first.ocrPages == 1)
        #expect(first.ocrSkippedPages == 3)
        #expect(first.ocrEmptyPages == 1)
        #expect(first.summary().contains("OCR: 1 page read, 1 read as nothing, 3 skipped (no image to read)"))
        let drawings = harness.sink.records.filter { $0.documentKey == "drawings.pdf" }
        #expect(!drawings.isEmpty)
        #expect(drawings.allSatisfy { $0.metadata["ocr_skipped_pages"] == .int(3) })
        #expect(drawings.allSatisfy { $0.metadata["ocr_empty_pages"] == .int(1) })

        // A copy's text comes from the state's extraction cache: nothing is OCR'd, nothing counted.
        try copySample("mixed-text-and-scan.pdf", as: "copy.pdf", into: harness)
        let second = try await harness.run()
        #expect(second.extractionsCached == 1)
        #expect(engines.recognitions == 2)
        #expect(second.ocrPages == nil && second.ocrSkippedPages == nil && second.ocrEmptyPages == nil)
        #expect(!second.summary().contains("OCR"))
    }
}
