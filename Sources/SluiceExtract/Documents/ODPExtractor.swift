internal import CLibXML2
import Foundation
import SluiceCore

/// OpenDocument presentations (ODP, as LibreOffice Impress saves them), read as ``PPTXExtractor`` reads
/// PowerPoint decks: the ZIP container through `ZIPContainer` (with the limits of every ZIP-based format,
/// `extract.zip.*`) and `content.xml` through libxml2, any DTD refused before parsing.
///
/// One section per slide (`draw:page`), in the document's order, its page the slide's number and its
/// heading the slide's title (the frame of `presentation:class="title"`), written first as a Markdown
/// heading line. Then each frame's and shape's text in document order (groups included), a line per
/// paragraph or list item and a block per frame; tables a row per line, cells joined by " | "; and the
/// speaker notes (`presentation:notes`) last, after "Notes: ". Slide numbers, dates, footers, headers and
/// the notes page's picture of the slide are not text of the slide. Title and author come from
/// `meta.xml` (else the first slide's title); `slides` counts the slides.
///
/// Recognised by content: a ZIP archive whose first entry, `mimetype`, says
/// `application/vnd.oasis.opendocument.presentation`, whatever its name.
public struct ODPExtractor: Extractor {
    let limits: ZIPContainer.Limits

    /// - Parameters:
    ///   - maxInflatedBytes: Most bytes inflated from one presentation in all (`extract.zip.max_inflated_mb`).
    ///   - maxCompressionRatio: Most inflated bytes per compressed byte of one part
    ///     (`extract.zip.max_compression_ratio`).
    public init(maxInflatedBytes: Int = 100 << 20, maxCompressionRatio: Double = 200) {
        limits = ZIPContainer.Limits(maxInflatedBytes: maxInflatedBytes, maxCompressionRatio: maxCompressionRatio)
    }

    public var name: String { "odp" }

    public func accepts(_ input: ExtractionInput) -> Bool {
        OpenDocumentPackage.kind(of: input.bytes) == .presentation
    }

    /// Placeholders whose text is not the slide's.
    private static let furniture: Set<String> = ["page-number", "date-time", "footer", "header", "page", "handout"]

    public func extract(_ input: ExtractionInput) throws -> ExtractedText {
        try OpenDocumentPackage.extract(.presentation, from: input, limits: limits) { body, _ in
            var budget = input.textBudget()
            var sections: [TextSection] = []
            var firstTitle: String?
            var count = 0
            for page in body.children where page.isElement && page.localName == "page" {
                count += 1
                var slide = Slide()
                Self.visit(page, into: &slide, notes: false, depth: 0)
                if firstTitle == nil { firstTitle = slide.title }
                guard let section = slide.section(page: count) else { continue }
                try budget.charge(section)
                sections.append(section)
            }
            var found = ["slides": String(count)]
            if let firstTitle { found["title"] = firstTitle }
            return (sections, found)
        }
    }

    /// One slide's text as it is gathered.
    private struct Slide {
        var title: String?
        var blocks: [String] = []
        var notes: [String] = []

        func section(page: Int) -> TextSection? {
            SlideText.section(title: title, blocks: blocks, notes: notes, page: page)
        }
    }

    /// Walks a slide, a group or a notes page in document order.
    private static func visit(_ node: xmlNodePtr, into slide: inout Slide, notes inNotes: Bool, depth: Int) {
        guard depth < 32 else { return }
        for shape in node.children where shape.isElement {
            switch shape.localName {
            case "notes":
                visit(shape, into: &slide, notes: true, depth: depth + 1)
            case "g":
                visit(shape, into: &slide, notes: inNotes, depth: depth + 1)
            case "frame", "custom-shape", "rect", "ellipse", "polygon", "path", "caption":
                let role = shape.attribute("class") ?? ""
                if furniture.contains(role) { continue }
                if let table = shape.child("table") {
                    let rows = OpenDocumentText.tableRows(of: table)
                    if !rows.isEmpty, !inNotes { slide.blocks.append(rows.joined(separator: "\n")) }
                    continue
                }
                if !inNotes, AltText.holdsPicture(shape), let marker = AltText.openDocument(shape) {
                    slide.blocks.append(marker)
                    continue
                }
                let lines = self.lines(of: shape.child("text-box") ?? shape, depth: 0)
                guard !lines.isEmpty else { continue }
                if !inNotes, role == "title", slide.title == nil {
                    let joined = StructuredTextBuilder.collapse(lines.joined(separator: " "))
                    if !joined.isEmpty { slide.title = joined }
                } else if inNotes {
                    slide.notes.append(lines.joined(separator: "\n"))
                } else {
                    slide.blocks.append(lines.joined(separator: "\n"))
                }
            default:
                continue  // media, connectors: no text
            }
        }
    }

    /// The non-empty lines of a text box or shape: a line per paragraph or list item, line breaks kept.
    private static func lines(of node: xmlNodePtr, depth: Int) -> [String] {
        guard depth < 32 else { return [] }
        var lines: [String] = []
        for child in node.children where child.isElement {
            switch child.localName {
            case "p", "h":
                for part in OpenDocumentText.text(of: child).split(separator: "\n") {
                    let line = StructuredTextBuilder.collapse(String(part))
                    if !line.isEmpty { lines.append(line) }
                }
            case "list", "list-item", "list-header":
                lines += self.lines(of: child, depth: depth + 1)
            default:
                continue
            }
        }
        return lines
    }
}
