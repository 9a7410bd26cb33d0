import SluiceCore

extension ImageExtractor {
    /// The version of this extractor's output: bump it with any change to ``ImageExtractor`` or
    /// `OCREngine` that can change the text or metadata it produces.
    public static let outputVersion = 1

    /// The identity of an image's OCR with these settings: languages, page segmentation mode and
    /// Tesseract's version (images are read at their own resolution: `dpi` and `mode` are for PDF pages).
    public static func identity(ocr: PipelineConfiguration.Extract.OCR) -> ExtractorIdentity {
        ExtractorIdentity(name: "image", version: outputVersion, settings: ocrSettings(ocr))
    }

    /// The OCR settings every recognition depends on.
    static func ocrSettings(_ ocr: PipelineConfiguration.Extract.OCR) -> [String: String] {
        [
            "ocr.languages": ocr.languages.joined(separator: "+"),
            "ocr.psm": String(ocr.pageSegmentationMode),
            "tesseract": OCREngine.tesseractVersion,
        ]
    }

    public var cacheIdentity: ExtractorIdentity? { Self.identity(ocr: engines.options) }

    /// The settings that shape an image's chunks (``Extractor/shapingSettings``): the languages and page
    /// segmentation mode (images are read at their own resolution, whatever `extract.ocr.dpi` says).
    public static func shapingSettings(ocr: PipelineConfiguration.Extract.OCR) -> [String: String] {
        [
            "extract.ocr.languages": ocr.languages.joined(separator: "+"),
            "extract.ocr.psm": String(ocr.pageSegmentationMode),
        ]
    }

    public var shapingSettings: [String: String] { Self.shapingSettings(ocr: engines.options) }
}
