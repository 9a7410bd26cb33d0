import Foundation
import SluiceCore
import SluiceExtract
import Testing

/// Which PDF pages are OCR'd (docs/EXTRACTORS.md, "Which pages are OCR'd") and what the metadata says
/// of them, counted through the engine pool's recognitions rather than timed.
@Suite struct PDFExtractorOCRTests {
    static func extract(
        _ path: String,
        mode: PipelineConfiguration.Extract.OCR.Mode = .auto
    ) throws -> (text: ExtractedText, recognitions: Int) {
        var ocr = PipelineConfiguration.Extract.OCR()
        ocr.mode = mode
        let engines = OCREnginePool(options: ocr)
        let text = try PDFExtractorTests.extract(path, with: PDFExtractor(pdf: .init(), engines: engines))
        return (text, engines.recognitions)
    }

    @Test func blankVectorAndIconPagesAreNotOCRdAndAScanOfNothingIsRecorded() throws {
        // Page 1 text, 2 blank, 3 vector drawings, 4 an icon, 5 a light-gray full-page image.
        let (text, recognitions) = try Self.extract("pdf/pages-without-scans.pdf")
        #expect(recognitions == 1, "only the page an image covers is rendered and OCR'd")
        #expect(text.metadata["ocr_skipped_pages"] == "3")
        #expect(text.metadata["ocr_empty_pages"] == "1", "the scan of an empty sheet reads as nothing")
        #expect(text.metadata["ocr_pages"] == nil)
        #expect(text.metadata["ocr_confidence"] == nil, "no page's text came from OCR")
        #expect(text.sections.map(\.page) == [1])
    }

    @Test func scannedPagesAreStillOCRd() throws {
        let (mixed, mixedRecognitions) = try Self.extract("pdf/mixed-text-and-scan.pdf")
        #expect(mixedRecognitions == 1)
        #expect(mixed.metadata["ocr_pages"] == "1")
        #expect(mixed.metadata["ocr_skipped_pages"] == nil && mixed.metadata["ocr_empty_pages"] == nil)
        #expect(mixed.sections[1].text.contains("Lempel-Ziv-Markov"))

        let (scan, scanRecognitions) = try Self.extract("pdf/xz-faq-scanned.pdf")
        #expect(scanRecognitions == 1)
        #expect(scan.metadata["ocr_pages"] == "1")
    }

    @Test func alwaysOCRsEveryPageImageOrNot() throws {
        let (text, recognitions) = try Self.extract("pdf/pages-without-scans.pdf", mode: .always)
        #expect(recognitions == 5)
        #expect(text.metadata["ocr_skipped_pages"] == nil)
        let read = Int(text.metadata["ocr_pages"] ?? "0")! + Int(text.metadata["ocr_empty_pages"] ?? "0")!
        #expect(read == 5, "each OCR'd page either gave the page its text or read nothing")
        #expect(text.sections.first?.text.contains("text layer") == true)
    }

    @Test func neverOCRsNoPage() throws {
        let (text, recognitions) = try Self.extract("pdf/pages-without-scans.pdf", mode: .never)
        #expect(recognitions == 0)
        #expect(text.metadata["ocr_skipped_pages"] == nil, "skipped is for pages auto mode would have OCR'd")
    }

    @Test func pageOutcomesSurviveTheWorkerProtocol() throws {
        // Worker processes send pages to the parent, which assembles the metadata.
        var ocr = PipelineConfiguration.Extract.OCR()
        ocr.mode = .auto
        let extractor = PDFExtractor(pdf: .init(), engines: OCREnginePool(options: ocr))
        let document = try extractor.open(path: Samples.url("pdf/pages-without-scans.pdf").path)
        let pages = try extractor.pages(of: document, range: 0..<5)
        let decoded = try JSONDecoder().decode([PDFPage].self, from: JSONEncoder().encode(pages))
        #expect(decoded == pages)
        let text = try extractor.assemble(info: PDFExtractor.info(of: document), pages: decoded)
        #expect(text.metadata["ocr_skipped_pages"] == "3" && text.metadata["ocr_empty_pages"] == "1")
    }
}
