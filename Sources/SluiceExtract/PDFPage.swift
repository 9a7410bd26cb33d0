/// The text of one PDF page as extracted, before document-level clean-up.
package struct PDFPage: Sendable, Hashable, Codable {
    /// 1-based page number.
    package var number: Int
    package var text: String
    /// Tesseract's mean word confidence (0–100) when the text came from OCR, nil when from the text layer.
    package var ocrConfidence: Int?

    package init(number: Int, text: String, ocrConfidence: Int? = nil) {
        self.number = number
        self.text = text
        self.ocrConfidence = ocrConfidence
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
