internal import CLibXML2
import Foundation

/// The text of OpenDocument paragraphs (`text:p`, `text:h`) as the three formats read it: text nodes,
/// spans and links; `text:s` (spaces, `text:c` of them), `text:tab` and `text:line-break`; a note
/// (`text:note`) as its citation (`[1]`), its body handed to `notes` when given; a picture's or chart's
/// alternative text (``AltText``); annotations, deleted changes, other drawings inside the paragraph and
/// bookmarks are left out.
enum OpenDocumentText {
    /// Elements inside a paragraph that are not its text.
    private static let skipped: Set<String> = [
        "annotation", "annotation-end", "tracked-changes", "change", "change-start", "change-end",
        "bookmark", "bookmark-start", "bookmark-end", "reference-mark", "reference-mark-start",
        "reference-mark-end", "custom-shape", "rect", "line", "ellipse", "g", "soft-page-break",
        "sequence-decls", "variable-decls", "user-field-decls",
    ]

    /// The text of a paragraph or heading (or of a cell or a list item: their paragraphs joined by spaces).
    static func text(of node: xmlNodePtr, notes: ((_ citation: String, _ body: String) -> Void)? = nil) -> String {
        var out = ""
        func walk(_ node: xmlNodePtr, depth: Int) {
            guard depth < 256 else { return }
            for child in node.children {
                if child.isText {
                    out += child.content
                    continue
                }
                guard child.isElement else { continue }
                switch child.localName {
                case "s":
                    let count = child.attribute("c").flatMap(Int.init) ?? 1
                    out += String(repeating: " ", count: min(max(count, 1), 64))
                case "tab":
                    out += "\t"
                case "line-break":
                    out += "\n"
                case "note":
                    let citation = child.child("note-citation").map { HTMLWalker.text(of: $0) } ?? ""
                    let marker = "[\(citation.isEmpty ? "*" : citation)]"
                    out += marker
                    if let notes, let body = child.child("note-body") {
                        notes(marker, StructuredTextBuilder.collapse(text(of: body)))
                    }
                case "p", "h":
                    if !out.isEmpty, out.last?.isWhitespace == false { out += " " }
                    walk(child, depth: depth + 1)
                case "frame":
                    // A picture or an embedded object (a chart) anchored in the paragraph: its alternative
                    // text only; a text box's text is left out with the other drawings.
                    if AltText.holdsPicture(child), let marker = AltText.openDocument(child) {
                        AltText.append(marker, to: &out)
                    }
                case let name where skipped.contains(name):
                    continue
                default:
                    walk(child, depth: depth + 1)
                }
            }
        }
        walk(node, depth: 0)
        return out
    }

    /// The list styles of a document (`text:list-style` in `office:automatic-styles` and `office:styles`):
    /// for each, which levels (1-based) are numbered.
    static func numberedListLevels(in roots: [xmlNodePtr]) -> [String: Set<Int>] {
        var styles: [String: Set<Int>] = [:]
        for root in roots {
            for container in root.children where container.isElement {
                guard container.localName == "automatic-styles" || container.localName == "styles" else { continue }
                for style in container.children where style.isElement && style.localName == "list-style" {
                    guard let name = style.attribute("name") else { continue }
                    var numbered: Set<Int> = []
                    for level in style.children where level.isElement && level.localName == "list-level-style-number" {
                        let format = level.attribute("num-format") ?? "1"
                        if !format.isEmpty, let index = level.attribute("level").flatMap(Int.init) {
                            numbered.insert(index)
                        }
                    }
                    styles[name] = numbered
                }
            }
        }
        return styles
    }

    /// The rows of a table (`table:table`): a line per row with text, cells joined by ` | ` (covered cells
    /// of merged ranges left out); header rows, row groups and repeated rows (at most `maxRepeat` times)
    /// included.
    static func tableRows(of table: xmlNodePtr, maxRepeat: Int = 64) -> [String] {
        var rows: [String] = []
        func walk(_ node: xmlNodePtr, depth: Int) {
            guard depth < 8 else { return }
            for child in node.children where child.isElement {
                switch child.localName {
                case "table-header-rows", "table-rows", "table-row-group":
                    walk(child, depth: depth + 1)
                case "table-row":
                    let cells = child.children.filter { $0.isElement && $0.localName == "table-cell" }
                        .map { StructuredTextBuilder.collapse(text(of: $0)) }
                    guard cells.contains(where: { !$0.isEmpty }) else { continue }
                    let line = cells.joined(separator: " | ")
                    let repeats = child.attribute("number-rows-repeated").flatMap(Int.init) ?? 1
                    for _ in 0..<min(max(repeats, 1), maxRepeat) { rows.append(line) }
                default:
                    continue
                }
            }
        }
        walk(table, depth: 0)
        return rows
    }
}
