import Foundation
import SluiceCore

/// PDF documents through poppler-glib: text page by page, each page a section carrying its page number;
/// pages without a usable text layer rendered (cairo, `extract.ocr.dpi`) and OCR'd with Tesseract, when a
/// raster image on them could hold a scan.
///
/// Reading order is poppler's text-flow analysis (the order `pdftotext` uses without `-layout`), which
/// follows one- and two-column pages. Words hyphenated at line ends are joined and, when configured,
/// running headers and footers are dropped. The title and author become document metadata.
///
/// Pages are loaded one at a time and released: a document's memory is its text, not its pages. This
/// type works in process; ``IsolatedExtractor`` runs the same code in worker processes, splitting a
/// document's pages between them.
public struct PDFExtractor: Extractor {
    public let ocr: PipelineConfiguration.Extract.OCR
    public let pdf: PipelineConfiguration.Extract.PDF
    /// The Tesseract engines the OCR'd pages are recognized with (shared with the image extractor by
    /// ``ExtractorRegistry``).
    package let engines: OCREnginePool

    /// An extractor reading PDFs as `extract.pdf` says, OCR'ing pages as `extract.ocr` says.
    /// - Parameters:
    ///   - pdf: the text clean-up and the password variable (`extract.pdf`).
    ///   - ocr: when pages are OCR'd, in which languages and at which resolution (`extract.ocr`).
    public init(pdf: PipelineConfiguration.Extract.PDF, ocr: PipelineConfiguration.Extract.OCR) {
        self.init(pdf: pdf, engines: OCREnginePool(options: ocr))
    }

    /// An extractor whose OCR borrows engines from `engines` (shared with other extractors).
    package init(pdf: PipelineConfiguration.Extract.PDF, engines: OCREnginePool) {
        self.ocr = engines.options
        self.pdf = pdf
        self.engines = engines
    }

    public var name: String { "pdf" }

    public func accepts(_ input: ExtractionInput) -> Bool {
        FormatSniffer.sniff(input.bytes) == .pdf
    }

    public func extract(_ input: ExtractionInput) throws -> ExtractedText {
        DebugPause.at("REOPEN", path: input.fileURL.path)
        let document = try open(file: input.openFile())
        let info = Self.info(of: document)
        var budget = input.textBudget()
        let pages = try self.pages(of: document, range: 0..<info.pageCount, budget: &budget)
        return try assemble(info: info, pages: pages)
    }

    /// Opens a PDF with the password from `extract.pdf.password_env`, if one is configured.
    /// - Throws: ``SluiceError`` with code `encrypted` (saying how to configure a password) or
    ///   `extractionFailed` (damaged, truncated or not a PDF).
    package func open(path: String) throws -> PDFDocument {
        try open(path: path) { try PDFDocument(path: path, password: $0) }
    }

    /// Opens the PDF of an open ``DocumentFile`` (the file checked to be the one scanned), as
    /// ``open(path:)`` does.
    package func open(file: DocumentFile) throws -> PDFDocument {
        try open(path: file.path) { try PDFDocument(file: file, password: $0) }
    }

    private func open(path: String, _ makeDocument: (String?) throws -> PDFDocument) throws -> PDFDocument {
        let variable = pdf.passwordEnvironmentVariable
        // Optional: an encrypted PDF without one fails alone, with the hint below.
        let password = try? EnvironmentSecret.value(of: variable, key: "extract.pdf.password_env", need: .optional)
        do {
            return try makeDocument(password)
        } catch let error as SluiceError where error.code == .encrypted {
            let hint: String
            switch (variable, password) {
            case (nil, _):
                hint = "set extract.pdf.password_env to the name of an environment variable holding its password"
            case (let name?, nil): hint = "the environment variable \(name) (extract.pdf.password_env) is not set"
            case (let name?, _?): hint = "the password in \(name) (extract.pdf.password_env) does not open it"
            }
            throw SluiceError(.encrypted, "PDF is encrypted: \(hint)", cause: error)
        } catch let error as SluiceError {
            // Poppler's messages name the absolute path; the document key already says which file it is.
            throw SluiceError(
                error.code,
                "not a readable PDF: \(error.message.replacingOccurrences(of: ": \(URL(fileURLWithPath: path).standardizedFileURL.path)", with: ""))",
                cause: error
            )
        }
    }

    /// Page count, title and author.
    package static func info(of document: PDFDocument) -> PDFInfo {
        PDFInfo(pageCount: document.pageCount, title: document.title, author: document.author)
    }

    /// The text of the pages in `range` (zero-based indices), OCR'd where `extract.ocr` says so.
    package func pages(of document: PDFDocument, range: Range<Int>) throws -> [PDFPage] {
        var budget = TextBudget(limit: .max)
        return try pages(of: document, range: range, budget: &budget)
    }

    /// The pages in `range`, each charged to `budget` as it is read: a page that passes it stops the
    /// reading (a form drawn a thousand times on a page, pages of repeated text).
    /// - Throws: ``SluiceError/Code/textTooLarge`` past the budget; what reading a page throws.
    package func pages(of document: PDFDocument, range: Range<Int>, budget: inout TextBudget) throws -> [PDFPage] {
        var pages: [PDFPage] = []
        for index in range {
            let page = try self.page(of: document, index: index)
            try budget.charge(page.text)
            pages.append(page)
        }
        return pages
    }

    /// The least share of a page that raster images must cover for `auto` mode to OCR it: 1%, a 2.5 cm
    /// square on A4 (a bullet, an icon, a small logo). A scan covers the page; a page wrongly skipped loses
    /// its text while one wrongly OCR'd costs a CPU-second, so the line is low (docs/EXTRACTORS.md, "Which
    /// pages are OCR'd").
    static let minimumScanCoverage = 0.01

    /// One page's text (zero-based index), OCR'd where `extract.ocr` says so: in `auto` mode a page with
    /// too little text layer only if a scan can be on it (raster images cover at least
    /// ``minimumScanCoverage`` of it), decided before it is rendered.
    private func page(of document: PDFDocument, index: Int) throws -> PDFPage {
        let number = index + 1
        let layer = try document.text(ofPage: index)
        guard ocr.mode != .never else { return PDFPage(number: number, text: layer) }
        let visible = Self.visibleCharacters(layer, upTo: ocr.mode == .auto ? ocr.minTextCharacters : 0)
        guard ocr.mode == .always || visible < ocr.minTextCharacters else {
            return PDFPage(number: number, text: layer)
        }
        // A blank page, vector drawings or an icon: nothing a scan would show, nothing to render.
        if ocr.mode == .auto, try document.images(onPage: index).coverage < Self.minimumScanCoverage {
            return PDFPage(number: number, text: layer, withoutOCR: .nothingToRead)
        }
        let image = try document.renderGray(page: index, dpi: ocr.dpi)
        let result = try engines.withEngine {
            try $0.recognize(gray: image.pixels, width: image.width, height: image.height, resolution: image.dpi)
        }
        let recognized = Self.visibleCharacters(result.text, upTo: visible + 1)
        // OCR'd into nothing, the page keeps its text layer; in auto mode a sparse one (a page number over
        // a scan) also loses to what OCR reads.
        if recognized == 0 || (ocr.mode == .auto && recognized <= visible) {
            return PDFPage(number: number, text: layer, withoutOCR: .readNothing)
        }
        return PDFPage(number: number, text: result.text, ocrConfidence: result.confidence)
    }

    /// Non-white-space Unicode scalars in `text`, counting no further than `limit`.
    static func visibleCharacters(_ text: String, upTo limit: Int) -> Int {
        var count = 0
        for scalar in text.unicodeScalars where !scalar.properties.isWhitespace {
            count += 1
            if count >= limit { break }
        }
        return count
    }

    /// The document's text from its pages: clean-up, one section per non-empty page, and metadata
    /// (`format`, `pages`, `title`, `author`; for OCR'd pages `ocr_pages` and `ocr_confidence`; for pages OCR
    /// was for but did not give their text `ocr_skipped_pages` and `ocr_empty_pages`; each absent when zero).
    /// - Throws: ``SluiceError/Code/emptyDocument`` when no page has text, saying whether OCR was off.
    package func assemble(info: PDFInfo, pages: [PDFPage]) throws -> ExtractedText {
        var texts = pages.map(\.text)
        if pdf.joinHyphens { texts = texts.map(PDFTextCleanup.joinHyphenatedLines) }
        if pdf.stripHeadersFooters { texts = PDFTextCleanup.stripRepeatedEdges(texts) }
        var sections: [TextSection] = []
        for (page, text) in zip(pages, texts) where text.contains(where: { !$0.isWhitespace }) {
            sections.append(TextSection(text: text, page: page.number))
        }
        let skipped = pages.count(where: { $0.withoutOCR == .nothingToRead })
        let empty = pages.count(where: { $0.withoutOCR == .readNothing })
        guard !sections.isEmpty else {
            let reason =
                info.pageCount == 0
                ? "the PDF has no pages"
                : ocr.mode == .never
                    ? "none of its \(info.pageCount) pages has a text layer, and extract.ocr is never"
                    : skipped > 0
                        ? "none of its \(info.pageCount) pages has text, even after OCR (\(skipped) not OCR'd: no image on them to read; extract.ocr: always OCRs every page)"
                        : "none of its \(info.pageCount) pages has text, even after OCR"
            throw SluiceError(.emptyDocument, reason)
        }
        var metadata = ["format": "pdf", "pages": String(info.pageCount)]
        if let title = info.title { metadata["title"] = title }
        if let author = info.author { metadata["author"] = author }
        let confidences = pages.compactMap(\.ocrConfidence)
        if !confidences.isEmpty {
            metadata["ocr_pages"] = String(confidences.count)
            metadata["ocr_confidence"] = String(confidences.reduce(0, +) / confidences.count)
        }
        if skipped > 0 { metadata["ocr_skipped_pages"] = String(skipped) }
        if empty > 0 { metadata["ocr_empty_pages"] = String(empty) }
        return ExtractedText(sections: sections, metadata: metadata)
    }
}
