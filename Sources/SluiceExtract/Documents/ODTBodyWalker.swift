internal import CLibXML2
import SluiceCore

/// Walks an ODT's `office:text` in order and feeds a ``StructuredTextBuilder``, as ``DOCXBodyWalker``
/// walks a Word body: headings (`text:h`, by `text:outline-level`) start sections; lists become
/// `- item` / `1. item` lines (indented by level, numbered where the list style says so); tables a line
/// per row with cells joined by ` | `; sections, tables of contents and other containers are walked
/// through; notes follow the body under a "Notes" heading, each starting with its citation.
struct ODTBodyWalker {
    /// Numbered levels of each list style (``OpenDocumentText/numberedListLevels(in:)``).
    let listStyles: [String: Set<Int>]
    private var builder: StructuredTextBuilder
    private var notes: [(marker: String, text: String)] = []
    /// The last number of each outermost list, by its `xml:id` and by its style: a list that continues
    /// another (`text:continue-list`, `text:continue-numbering`) counts on from it.
    private var lastNumber: (byID: [String: Int], byStyle: [String: Int]) = ([:], [:])

    init(listStyles: [String: Set<Int>], budget: TextBudget) {
        self.listStyles = listStyles
        builder = StructuredTextBuilder(budget: budget)
    }

    /// The sections, the notes last.
    /// - Throws: ``SluiceError/Code/textTooLarge`` when the text passed the budget.
    mutating func finish() throws -> [TextSection] {
        let found = notes.filter { !$0.text.isEmpty }
        if !found.isEmpty {
            builder.heading("Notes", level: 1)
            for note in found { builder.paragraph(note.marker + " " + note.text) }
        }
        return try builder.finish()
    }

    /// Walks a container of block content (`office:text`, `text:section`, an index body, …).
    mutating func visit(_ container: xmlNodePtr, depth: Int = 0) {
        guard depth < 64 else { return }
        for node in container.children where node.isElement {
            guard builder.exceeded == nil else { return }  // past the budget: nothing more is taken
            switch node.localName {
            case "h":
                let level = node.attribute("outline-level").flatMap(Int.init).map { min(max($0, 1), 10) } ?? 1
                builder.heading(text(of: node), level: level)
            case "p":
                builder.paragraph(text(of: node))
            case "list":
                // Lists that follow one another (a list continued after a nested one) are one block.
                list(node, level: 0, style: node.attribute("style-name"))
            case "table":
                builder.endBlock()
                for row in OpenDocumentText.tableRows(of: node) { builder.line(row) }
                builder.endBlock()
            case "section", "index-body", "table-of-content", "alphabetical-index", "illustration-index",
                "table-index", "object-index", "user-index", "bibliography", "change-deleted":
                if node.localName == "change-deleted" { continue }
                visit(node, depth: depth + 1)
            default:
                continue  // declarations, tracked changes, forms: no text of the body
            }
        }
    }

    private mutating func list(_ node: xmlNodePtr, level: Int, style: String?, depth: Int = 0) {
        guard depth < 32 else { return }
        let style = node.attribute("style-name") ?? style
        let numbered = style.map { listStyles[$0]?.contains(level + 1) == true } ?? false
        var number = 0
        if depth == 0, let continued = node.attribute("continue-list") {
            number = lastNumber.byID[continued] ?? 0
        } else if depth == 0, node.attribute("continue-numbering") == "true", let style {
            number = lastNumber.byStyle[style] ?? 0
        }
        defer {
            if depth == 0 {
                if let id = node.attribute("id") { lastNumber.byID[id] = number }
                if let style { lastNumber.byStyle[style] = number }
            }
        }
        for item in node.children where item.isElement {
            guard item.localName == "list-item" || item.localName == "list-header" else { continue }
            if let start = item.attribute("start-value").flatMap(Int.init) { number = start - 1 }
            var marked = false
            for child in item.children where child.isElement {
                switch child.localName {
                case "list":
                    list(child, level: level + 1, style: style, depth: depth + 1)
                case "p", "h":
                    let line = StructuredTextBuilder.collapse(text(of: child))
                    guard !line.isEmpty else { continue }
                    let indent = String(repeating: "  ", count: min(level, 8))
                    if marked {
                        builder.line(indent + "  " + line)
                    } else {
                        number += 1
                        builder.line(indent + (numbered ? "\(number)." : "-") + " " + line)
                        marked = true
                    }
                default:
                    continue
                }
            }
        }
    }

    private mutating func text(of node: xmlNodePtr) -> String {
        var found: [(String, String)] = []
        let text = OpenDocumentText.text(of: node) { found.append(($0, $1)) }
        notes += found.map { (marker: $0.0, text: $0.1) }
        return text
    }
}
