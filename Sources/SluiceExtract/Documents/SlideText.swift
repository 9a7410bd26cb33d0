internal import CLibXML2
import Foundation
import SluiceCore

/// The text of one slide and its notes, as ``PPTXExtractor`` lays it out.
struct SlideText {
    private(set) var title: String?
    private var blocks: [String] = []
    private var notes: [String] = []

    /// Placeholders whose text is not the slide's: numbers, dates, footers, headers and the notes page's
    /// picture of the slide.
    private static let furniture: Set<String> = ["sldNum", "dt", "ftr", "hdr", "sldImg"]

    /// Walks a shape tree (`p:spTree` or a group) in order.
    mutating func visit(tree: xmlNodePtr, notes inNotes: Bool) {
        for shape in tree.children where shape.isElement {
            switch shape.localName {
            case "sp":
                let placeholder = shape.child("nvSpPr")?.child("nvPr")?.child("ph")
                let type = placeholder?.attribute("type") ?? ""
                if Self.furniture.contains(type) { continue }
                guard let body = shape.child("txBody") else { continue }
                let lines = Self.paragraphs(of: body)
                if !inNotes && (type == "title" || type == "ctrTitle") && title == nil {
                    let joined = StructuredTextBuilder.collapse(lines.joined(separator: " "))
                    if !joined.isEmpty { title = joined }
                } else if !lines.isEmpty {
                    if inNotes {
                        notes.append(lines.joined(separator: "\n"))
                    } else {
                        blocks.append(lines.joined(separator: "\n"))
                    }
                }
            case "pic":
                // A picture has no text but its alternative text.
                if !inNotes, let marker = AltText.drawingML(shape.child("nvPicPr")?.child("cNvPr")) {
                    blocks.append(marker)
                }
            case "graphicFrame":
                guard !inNotes else { continue }
                guard let table = shape.child("graphic")?.child("graphicData")?.child("tbl") else {
                    // A chart or a diagram (SmartArt): its alternative text; its data and words are not read.
                    if let marker = AltText.drawingML(shape.child("nvGraphicFramePr")?.child("cNvPr")) {
                        blocks.append(marker)
                    }
                    continue
                }
                var rows: [String] = []
                for row in table.children where row.isElement && row.localName == "tr" {
                    let cells = row.children.filter { $0.isElement && $0.localName == "tc" }.map { cell in
                        cell.child("txBody").map {
                            StructuredTextBuilder.collapse(Self.paragraphs(of: $0).joined(separator: " "))
                        } ?? ""
                    }
                    if cells.contains(where: { !$0.isEmpty }) { rows.append(cells.joined(separator: " | ")) }
                }
                if !rows.isEmpty { blocks.append(rows.joined(separator: "\n")) }
            case "grpSp":
                visit(tree: shape, notes: inNotes)
            case "AlternateContent":
                // Markup compatibility: one of the alternatives, the first the reader understands.
                if let choice = shape.children.first(where: { $0.isElement && $0.localName == "Choice" }) {
                    visit(tree: choice, notes: inNotes)
                }
            default:
                continue  // connectors, media: no text
            }
        }
    }

    /// The slide as a section, or nil when it has no text.
    func section(page: Int) -> TextSection? { Self.section(title: title, blocks: blocks, notes: notes, page: page) }

    /// A slide as a section (PPTX's and ODP's layout): the title as a Markdown heading line, the blocks, then
    /// the notes after "Notes: "; nil when it has no text.
    static func section(title: String?, blocks: [String], notes: [String], page: Int) -> TextSection? {
        var parts = blocks
        if !notes.isEmpty { parts.append("Notes: " + notes.joined(separator: "\n")) }
        if let title { parts.insert("# " + title, at: 0) }
        guard !parts.isEmpty else { return nil }
        return TextSection(text: parts.joined(separator: "\n\n"), page: page, headingPath: title.map { [$0] } ?? [])
    }

    /// The non-empty lines of a text body: a line per paragraph (`a:p`), line breaks (`a:br`) kept.
    static func paragraphs(of body: xmlNodePtr) -> [String] {
        var lines: [String] = []
        for paragraph in body.children where paragraph.isElement && paragraph.localName == "p" {
            var line = ""
            for run in paragraph.children where run.isElement {
                switch run.localName {
                case "r", "fld": line += run.child("t").map(Self.text(of:)) ?? ""
                case "br": line += "\n"
                default: continue
                }
            }
            for part in line.split(separator: "\n") {
                let trimmed = part.trimmingCharacters(in: .whitespaces)
                if !trimmed.isEmpty { lines.append(trimmed) }
            }
        }
        return lines
    }

    /// The text of an `a:t` element.
    private static func text(of node: xmlNodePtr) -> String {
        node.children.filter(\.isText).map(\.content).joined()
    }
}
