/// One stretch of a document's text with its position (a page, a section under a heading).
public struct TextSection: Sendable, Hashable {
    public var text: String
    /// 1-based page number, where the format has pages.
    public var page: Int?
    /// Headings enclosing this section, outermost first.
    public var headingPath: [String]
    /// Position metadata that every chunk of the section carries into the stored record (a JSON Lines
    /// line number, a CSV line range).
    public var metadata: [String: String]

    public init(text: String, page: Int? = nil, headingPath: [String] = [], metadata: [String: String] = [:]) {
        self.text = text
        self.page = page
        self.headingPath = headingPath
        self.metadata = metadata
    }
}

/// What an ``Extractor`` produces: the document's text in order, and document-level metadata.
public struct ExtractedText: Sendable, Hashable {
    public var sections: [TextSection]
    /// Document-level metadata (format, title, author, …).
    public var metadata: [String: String]

    public init(sections: [TextSection], metadata: [String: String] = [:]) {
        self.sections = sections
        self.metadata = metadata
    }

    /// Total UTF-8 size of the text.
    public var utf8Count: Int { sections.reduce(0) { $0 + $1.text.utf8.count } }
}
