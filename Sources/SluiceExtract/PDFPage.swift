/// The text of one PDF page as extracted, before document-level clean-up.
public struct PDFPage: Sendable, Hashable, Codable {
    /// 1-based page number.
    public var number: Int
    public var text: String
    /// Tesseract's mean word confidence (0–100) when the text came from OCR, nil when from the text layer.
    public var ocrConfidence: Int?

    public init(number: Int, text: String, ocrConfidence: Int? = nil) {
        self.number = number
        self.text = text
        self.ocrConfidence = ocrConfidence
    }
}

/// What is known of a PDF before its pages are read.
public struct PDFInfo: Sendable, Hashable, Codable {
    public var pageCount: Int
    public var title: String?
    public var author: String?

    public init(pageCount: Int, title: String?, author: String?) {
        self.pageCount = pageCount
        self.title = title
        self.author = author
    }
}
