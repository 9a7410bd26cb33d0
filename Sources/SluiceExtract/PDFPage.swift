/// The text of one PDF page as extracted, before document-level clean-up.
package struct PDFPage: Sendable, Hashable, Codable {
    /// 1-based page number.
    package var number: Int
    package var text: String
    /// Tesseract's mean word confidence (0–100) when the text came from OCR, nil when from the text layer.
    package var ocrConfidence: Int?
    /// Why a page that OCR was for has no OCR'd text: nil when its text layer was enough, or when its text
    /// came from OCR (``ocrConfidence``).
    package var withoutOCR: WithoutOCR?

    /// What became of a page with too little text layer that OCR did not give its text.
    package enum WithoutOCR: String, Sendable, Hashable, Codable {
        /// Not OCR'd: no raster image covers enough of the page to hold a scan (a blank page, vector
        /// drawings, an icon), so there is nothing to read (`ocr_skipped_pages`).
        case nothingToRead = "nothing_to_read"
        /// OCR'd into nothing: recognition read no text, or in `auto` mode no more than the page's sparse
        /// text layer, which the page keeps (`ocr_empty_pages`).
        case readNothing = "read_nothing"
    }

    package init(number: Int, text: String, ocrConfidence: Int? = nil, withoutOCR: WithoutOCR? = nil) {
        self.number = number
        self.text = text
        self.ocrConfidence = ocrConfidence
        self.withoutOCR = withoutOCR
    }
}

/// What is known of a PDF before its pages are read.
package struct PDFInfo: Sendable, Hashable, Codable {
    package var pageCount: Int
    package var title: String?
    package var author: String?

    package init(pageCount: Int, title: String?, author: String?) {
        self.pageCount = pageCount
        self.title = title
        self.author = author
    }
}
