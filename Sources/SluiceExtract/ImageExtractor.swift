import Foundation
import SluiceCore

/// Scanned pages and photos of text (PNG, JPEG, TIFF, BMP, GIF, WebP as leptonica reads them), read with
/// Tesseract. The mean word confidence goes into the document's metadata (`ocr_confidence`).
public struct ImageExtractor: Extractor {
    /// The Tesseract engines images are recognized with (shared with the PDF extractor by
    /// ``ExtractorRegistry``).
    package let engines: OCREnginePool

    /// An extractor recognizing images as `extract.ocr` says (languages, page segmentation).
    public init(ocr: PipelineConfiguration.Extract.OCR) { self.init(engines: OCREnginePool(options: ocr)) }

    /// An extractor that borrows engines from `engines` (shared with other extractors).
    package init(engines: OCREnginePool) { self.engines = engines }

    public var name: String { "image" }

    public func accepts(_ input: ExtractionInput) -> Bool {
        FormatSniffer.sniff(input.bytes).isImage
    }

    public func extract(_ input: ExtractionInput) throws -> ExtractedText {
        let format = FormatSniffer.sniff(input.bytes)
        let result = try recognize(input.bytes, format: format)
        return try Self.assemble(text: result.text, confidence: result.confidence, format: format)
    }

    /// Decodes and recognizes an image held in memory.
    package func recognize(_ bytes: [UInt8], format: DocumentFormat) throws -> (text: String, confidence: Int) {
        do {
            return try engines.withEngine { try $0.recognize(imageData: bytes) }
        } catch let error as SluiceError where error.code == .unreadable {
            throw SluiceError(
                .unreadable,
                "\(FormatSniffer.describe(format)) cannot be decoded (damaged or truncated?)",
                cause: error
            )
        }
    }

    /// The extracted text of an image from its OCR result.
    /// - Throws: ``SluiceError/Code/emptyDocument`` when OCR found no text.
    package static func assemble(text: String, confidence: Int, format: DocumentFormat) throws -> ExtractedText {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else {
            throw SluiceError(.emptyDocument, "OCR found no text in the \(FormatSniffer.describe(format))")
        }
        return ExtractedText(
            sections: [TextSection(text: trimmed, page: 1)],
            metadata: ["format": format.rawValue, "ocr": "tesseract", "ocr_confidence": String(confidence)]
        )
    }
}
