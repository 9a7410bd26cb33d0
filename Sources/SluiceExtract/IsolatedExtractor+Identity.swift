import SluiceCore

extension IsolatedExtractor {
    /// The same identity as the in-process extractor: worker processes run the same code on the same
    /// settings, so their extractions are interchangeable.
    public var cacheIdentity: ExtractorIdentity? {
        switch kind {
        case .pdf: PDFExtractor.identity(ocr: assembler.ocr, pdf: assembler.pdf)
        case .image: ImageExtractor.identity(ocr: assembler.ocr)
        }
    }

    /// The settings the in-process extractor declares: the same code reads them in the worker.
    public var shapingSettings: [String: String] {
        switch kind {
        case .pdf: PDFExtractor.shapingSettings(ocr: assembler.ocr, pdf: assembler.pdf)
        case .image: ImageExtractor.shapingSettings(ocr: assembler.ocr)
        }
    }
}
