import SluiceCore
import SluiceExtract
import Testing

/// The extraction cache's key part for PDF and image extractors: it changes with every setting that
/// changes their output, and only with those.
@Suite struct ExtractorIdentityTests {
    typealias OCR = PipelineConfiguration.Extract.OCR
    typealias PDF = PipelineConfiguration.Extract.PDF

    @Test func pdfIdentityFollowsTheSettingsThatChangeItsText() {
        let base = PDFExtractor.identity(ocr: OCR(), pdf: PDF())
        #expect(base == PDFExtractor(pdf: PDF(), engines: OCREnginePool(options: OCR())).cacheIdentity)
        let changes: [(inout OCR, inout PDF) -> Void] = [
            { o, _ in o.languages = ["deu"] }, { o, _ in o.pageSegmentationMode = 6 }, { o, _ in o.dpi = 200 },
            { o, _ in o.mode = .never }, { o, _ in o.minTextCharacters = 100 },
            { _, p in p.joinHyphens = false }, { _, p in p.stripHeadersFooters = true },
        ]
        var seen: Set<ExtractorIdentity> = [base]
        for change in changes {
            var ocr = OCR()
            var pdf = PDF()
            change(&ocr, &pdf)
            seen.insert(PDFExtractor.identity(ocr: ocr, pdf: pdf))
        }
        #expect(seen.count == changes.count + 1, "every change gives another identity")
        var password = PDF()
        password.passwordEnvironmentVariable = "REPORTS_PDF_PASSWORD"
        #expect(
            PDFExtractor.identity(ocr: OCR(), pdf: password) == base,
            "the password's variable does not change the text"
        )
    }

    /// The identity's poppler version comes from poppler's core library (always loaded) rather than from
    /// poppler-glib (loaded at the first page rendered); it must stay the string poppler-glib gives, which it
    /// was taken from before, or every cached extraction would be redone.
    @Test func popplerVersionIsPopplerGlibs() {
        #expect(PDFExtractor.popplerVersion == PDFDocument.renderingLibraryVersion)
        #expect(PDFExtractor.popplerVersion.split(separator: ".").count == 3)
    }

    @Test func imageIdentityFollowsLanguagesAndSegmentationOnly() {
        let base = ImageExtractor.identity(ocr: OCR())
        #expect(base == ImageExtractor(engines: OCREnginePool(options: OCR())).cacheIdentity)
        #expect(base.name == "image" && base != PDFExtractor.identity(ocr: OCR(), pdf: PDF()))
        var languages = OCR()
        languages.languages = ["eng", "fra"]
        #expect(ImageExtractor.identity(ocr: languages) != base)
        var psm = OCR()
        psm.pageSegmentationMode = 11
        #expect(ImageExtractor.identity(ocr: psm) != base)
        var dpi = OCR()
        dpi.dpi = 150  // PDF pages only: images are read at their own resolution
        #expect(ImageExtractor.identity(ocr: dpi) == base)
    }

    @Test func cheapExtractorsAreNotCached() {
        #expect(TextExtractor().cacheIdentity == nil)
        #expect(HTMLExtractor().cacheIdentity == nil)
    }
}
