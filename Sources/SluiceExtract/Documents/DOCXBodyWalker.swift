internal import CLibXML2
import SluiceCore

/// Walks `word/document.xml`'s body in order and feeds a ``StructuredTextBuilder``: heading paragraphs
/// start sections, list paragraphs become `- item` / `1. item` lines (indented by level), tables become
/// a line per row with cells joined by ` | `, other paragraphs become paragraphs.
struct DOCXBodyWalker {
    let styles: DOCXStyles
    private(set) var title: String?
    private var builder: StructuredTextBuilder
    /// Next number per (list id, level) for numbered lists.
    private var counters: [String: Int] = [:]
    /// Footnote and endnote numbers, by first reference.
    private var notes = DOCXNotes()

    /// - Parameter budget: What the text may spend (`extract.max_text_mb`).
    init(styles: DOCXStyles, budget: TextBudget = TextBudget(limit: .max)) {
        self.styles = styles
        builder = StructuredTextBuilder(budget: budget)
    }

    /// - Throws: ``SluiceError/Code/textTooLarge`` when the text passed the budget.
    mutating func finish() throws -> [TextSection] { try builder.finish() }

    /// After the body: the notes of `kind` in their part (its root element), as a section headed "Footnotes"
    /// or "Endnotes" at the outermost level, a paragraph per note starting with its marker.
    mutating func visit(notes kind: DOCXNotes.Kind, root: xmlNodePtr) {
        let found = notes.notes(kind, in: root)
        let paragraphs = found.map { ($0.marker, StructuredTextBuilder.collapse(text(of: $0.note))) }
            .filter { !$0.1.isEmpty }
        guard !paragraphs.isEmpty else { return }
        builder.heading(kind.heading, level: 1)
        for (marker, text) in paragraphs { builder.paragraph(marker + " " + text) }
    }

    mutating func visit(body: xmlNodePtr) {
        for node in body.children where node.isElement {
            guard builder.exceeded == nil else { return }  // past the budget: nothing more is taken
            switch node.localName {
            case "p": paragraph(node)
            case "tbl": table(node)
            case "sdt":
                // A content control (e.g. a table of contents): its content is ordinary body content.
                if let content = node.child("sdtContent") { visit(body: content) }
            case "customXml", "smartTag", "ins":
                visit(body: node)
            default: break
            }
        }
    }

    private mutating func paragraph(_ node: xmlNodePtr) {
        let properties = node.child("pPr")
        let text = text(of: node)
        let styleID = properties?.child("pStyle")?.attribute("val")
        var level = properties?.child("outlineLvl")?.attribute("val").flatMap { Int($0) }.flatMap {
            $0 < 9 ? $0 + 1 : nil
        }
        if level == nil, let styleID { level = styles.headingLevel(styleID: styleID) }
        if let level {
            builder.heading(text, level: level)
            return
        }
        if let styleID, styles.isTitle(styleID: styleID), title == nil {
            title = StructuredTextBuilder.collapse(text)
        }
        if let numbering = properties?.child("numPr"), let numID = numbering.child("numId")?.attribute("val"),
            numID != "0"
        {
            let ilvl = numbering.child("ilvl")?.attribute("val").flatMap { Int($0) } ?? 0
            let indent = String(repeating: "  ", count: min(ilvl, 8))
            var marker = "-"
            if styles.isNumbered(numID: numID, level: ilvl) {
                let key = "\(numID)/\(ilvl)"
                let number = (counters[key] ?? 0) + 1
                counters[key] = number
                // A new item at this level restarts the deeper levels.
                for deeper in (ilvl + 1)...9 { counters["\(numID)/\(deeper)"] = nil }
                marker = "\(number)."
            }
            let item = StructuredTextBuilder.collapse(text)
            if !item.isEmpty { builder.line(indent + marker + " " + item) }
            return
        }
        builder.paragraph(text)
    }

    private mutating func table(_ node: xmlNodePtr) {
        builder.endBlock()
        for row in node.children where row.isElement && row.localName == "tr" {
            let cells = row.children.filter { $0.isElement && $0.localName == "tc" }
                .map { StructuredTextBuilder.collapse(text(of: $0)) }
            if cells.contains(where: { !$0.isEmpty }) { builder.line(cells.joined(separator: " | ")) }
        }
        builder.endBlock()
    }

    /// The text of a paragraph (or of a table cell or a note: its paragraphs joined by spaces): runs' `w:t`,
    /// tabs, breaks, drawings' alternative text (``AltText``), and a marker for each footnote or endnote
    /// reference (``DOCXNotes``); deleted text,
    /// field instructions and the fallback copies of alternate content are left out.
    mutating func text(of node: xmlNodePtr) -> String {
        var out = ""
        func walk(_ node: xmlNodePtr, depth: Int) {
            guard depth < 256 else { return }
            for child in node.children where child.isElement {
                switch child.localName {
                case "t":
                    out += HTMLWalker.text(of: child)
                case "tab", "ptab":
                    out += "\t"
                case "br", "cr":
                    out += "\n"
                case "noBreakHyphen":
                    out += "-"
                case "docPr":
                    // A drawing's (picture's, chart's, diagram's) alternative text, where it sits in the run.
                    if let marker = AltText.drawingML(child) { AltText.append(marker, to: &out) }
                case "p":
                    if !out.isEmpty { out += " " }
                    walk(child, depth: depth + 1)
                case "footnoteReference", "endnoteReference":
                    if let kind = DOCXNotes.Kind(reference: child.localName), let id = child.attribute("id") {
                        out += notes.marker(kind, id: id)
                    }
                case "del", "delText", "instrText", "Fallback", "pPr", "rPr":
                    break
                default:
                    walk(child, depth: depth + 1)
                }
            }
        }
        walk(node, depth: 0)
        return out
    }
}
