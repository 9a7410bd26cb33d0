import CPopplerText
import SluiceCore

extension PDFExtractor {
    /// The version of this extractor's output: bump it with any change to ``PDFExtractor``,
    /// `PDFTextCleanup` or the page rendering that can change the text or metadata it produces (the
    /// persistent extraction cache then extracts every PDF again). 2: streams inflated by zlib
    /// (PopplerFlateStream.h), the same text on valid streams, possibly less of a damaged one. 3: pages
    /// without an image to read are not OCR'd, a page OCR'd into nothing keeps its text layer, and the
    /// metadata has `ocr_skipped_pages` and `ocr_empty_pages`.
    public static let outputVersion = 3

    /// The identity of a PDF extraction with these settings (in process or in worker processes alike):
    /// every `extract.ocr` and `extract.pdf` setting that changes the text, plus poppler's and Tesseract's
    /// versions (an upgrade can change reading order or recognition). Not the password's variable: it
    /// decides whether a document opens, not its text.
    public static func identity(
        ocr: PipelineConfiguration.Extract.OCR,
        pdf: PipelineConfiguration.Extract.PDF
    ) -> ExtractorIdentity {
        var settings = ImageExtractor.ocrSettings(ocr)
        settings["ocr.mode"] = ocr.mode.rawValue
        settings["ocr.dpi"] = String(ocr.dpi)
        settings["ocr.min_text_chars"] = String(ocr.minTextCharacters)
        settings["pdf.strip_headers"] = String(pdf.stripHeadersFooters)
        settings["pdf.join_hyphens"] = String(pdf.joinHyphens)
        settings["poppler"] = popplerVersion
        return ExtractorIdentity(name: "pdf", version: outputVersion, settings: settings)
    }

    /// Poppler's version ("22.12.0"), from its core library, which is always loaded: the string poppler-glib's
    /// `poppler_get_version` gives (see PopplerTextLayer.h), without loading poppler-glib into `sluice` for the
    /// extraction cache.
    package static var popplerVersion: String { String(cString: sluice_pdf_text_poppler_version()) }

    public var cacheIdentity: ExtractorIdentity? { Self.identity(ocr: ocr, pdf: pdf) }

    /// The settings that shape a PDF's chunks (``Extractor/shapingSettings``): OCR's, as an image's, plus
    /// when pages are OCR'd and how their text is cleaned up. Not the password's variable (it decides
    /// whether a document opens, not its text).
    public static func shapingSettings(
        ocr: PipelineConfiguration.Extract.OCR,
        pdf: PipelineConfiguration.Extract.PDF
    ) -> [String: String] {
        var settings = ImageExtractor.shapingSettings(ocr: ocr)
        settings["extract.ocr.mode"] = ocr.mode.description
        settings["extract.ocr.dpi"] = String(ocr.dpi)
        settings["extract.ocr.min_text_chars"] = String(ocr.minTextCharacters)
        settings["extract.pdf.strip_headers"] = String(pdf.stripHeadersFooters)
        settings["extract.pdf.join_hyphens"] = String(pdf.joinHyphens)
        return settings
    }

    public var shapingSettings: [String: String] { Self.shapingSettings(ocr: ocr, pdf: pdf) }
}
