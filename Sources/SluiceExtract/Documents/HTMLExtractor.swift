internal import CLibXML2
import Foundation
import SluiceCore

/// HTML through libxml2's HTML parser (recover mode, no network): headings become sections with
/// heading paths, paragraphs, lists (`- item`, `1. item`), tables (a row per line, cells joined by
/// ` | `) and image alt text (`[image: …]`) are kept; `script`, `style`, `nav`, `header`, `footer`,
/// `aside`, forms and hidden elements are dropped. The `<title>` goes into the document metadata.
///
/// The character set is the one declared (byte-order mark, then the transport's, an HTTP `Content-Type`'s
/// charset, then `<meta charset>` or `http-equiv` in the first 4 KiB); without a declaration it is UTF-8 if
/// the bytes are valid UTF-8, otherwise windows-1252 (HTML's default, a superset of Latin-1).
public struct HTMLExtractor: Extractor {
    public init() {}

    public var name: String { "html" }

    static let htmlExtensions: Set<String> = ["html", "htm", "xhtml", "shtml"]

    public func accepts(_ input: ExtractionInput) -> Bool {
        let ext = input.fileURL.pathExtension.lowercased()
        if TextExtractor.markdownExtensions.contains(ext) { return false }
        return HTMLSniffer.looksLikeHTML(input.bytes, extensionHint: Self.htmlExtensions.contains(ext))
    }

    public func extract(_ input: ExtractionInput) throws -> ExtractedText {
        guard !input.bytes.isEmpty else { throw SluiceError(.emptyDocument, "zero-byte file: nothing to index") }
        let encoding = HTMLSniffer.encoding(of: input.bytes, declared: input.declaredCharset)
        let tree = try XMLTree.html(input.bytes, encoding: encoding)
        guard let root = tree.root else { throw SluiceError(.emptyDocument, "the HTML has no elements") }
        var walker = HTMLWalker(budget: input.textBudget())
        walker.visit(root, depth: 0)
        let sections = try walker.finish()
        guard !sections.isEmpty else { throw SluiceError(.emptyDocument, "the HTML has no visible text") }
        var metadata = ["format": "html", "charset": encoding]
        if let title = walker.title, !title.isEmpty { metadata["title"] = title }
        return ExtractedText(sections: sections, metadata: metadata)
    }
}
