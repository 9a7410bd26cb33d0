internal import CLibXML2
import Foundation
import SluiceCore

/// Walks an HTML tree in document order and feeds a ``StructuredTextBuilder``.
struct HTMLWalker {
    private(set) var title: String?
    private var builder: StructuredTextBuilder
    /// Inline text of the block being read.
    private var inline = ""
    /// The enclosing lists: whether each is ordered, and its next item number.
    private var lists: [(ordered: Bool, next: Int)] = []
    private var preformatted = 0
    /// How many `article`, `main` or `section` elements enclose the node being visited.
    private var sectioning = 0

    /// Elements whose content is boilerplate or not text.
    static let dropped: Set<String> = [
        "script", "style", "noscript", "template", "nav", "header", "footer", "aside", "form", "button",
        "select", "option", "textarea", "svg", "math", "iframe", "object", "embed", "canvas", "audio", "video",
        "map", "dialog", "menu",
    ]
    /// Elements that start and end a block of text.
    static let blocks: Set<String> = [
        "p", "div", "section", "article", "main", "blockquote", "pre", "address", "figure", "figcaption",
        "details", "summary", "dl", "dt", "dd", "hr", "center", "fieldset", "legend", "caption", "body", "html",
    ]

    /// - Parameter budget: What the text may still spend (`extract.max_text_mb`).
    init(budget: TextBudget = TextBudget(limit: .max)) { builder = StructuredTextBuilder(budget: budget) }

    /// What has been spent of the budget, the text so far included.
    var budget: TextBudget { builder.budget }

    /// - Throws: ``SluiceError/Code/textTooLarge`` when the text passed the budget.
    mutating func finish() throws -> [TextSection] {
        endBlock()
        return try builder.finish()
    }

    mutating func visit(_ node: xmlNodePtr, depth: Int) {
        guard builder.exceeded == nil else { return }  // past the budget: nothing more is taken
        if node.isText {
            appendText(node.content)
            return
        }
        guard node.isElement else { return }
        if depth >= Self.structuredDepth {
            // Deeper than the structure is followed (recursion would overflow the stack): the subtree's
            // text is read iteratively, as running text.
            appendText(Self.inlineText(of: node))
            return
        }
        let name = node.localName
        if name == "head" {
            if let titleNode = node.children.first(where: { $0.isElement && $0.localName == "title" }) {
                title = StructuredTextBuilder.collapse(Self.text(of: titleNode))
            }
            return
        }
        if name == "title" {
            if title == nil { title = StructuredTextBuilder.collapse(Self.text(of: node)) }
            return
        }
        // A page's header and footer are boilerplate; an article's or section's hold its title and byline.
        let inContent = sectioning > 0 && (name == "header" || name == "footer")
        if (Self.dropped.contains(name) && !inContent) || Self.isHidden(node) { return }
        switch name {
        case "h1", "h2", "h3", "h4", "h5", "h6":
            endBlock()
            builder.heading(Self.headingTitle(Self.inlineText(of: node)), level: Int(String(name.last!))!)
        case "br":
            inline += "\n"
        case "img":
            if let alt = node.attribute("alt")?.trimmingCharacters(in: .whitespacesAndNewlines), !alt.isEmpty {
                inline += " [image: \(StructuredTextBuilder.collapse(alt))] "
            }
        case "a" where Self.isSkipLink(node):
            return
        case "table":
            endBlock()
            table(node)
        case "ul", "ol":
            endBlock()
            lists.append((name == "ol", Int(node.attribute("start") ?? "") ?? 1))
            for child in node.children { visit(child, depth: depth + 1) }
            lists.removeLast()
            if lists.isEmpty { builder.endBlock() }
        case "li":
            endBlock()
            let indent = String(repeating: "  ", count: max(lists.count - 1, 0))
            var marker = "-"
            if let last = lists.last, last.ordered {
                marker = "\(last.next)."
                lists[lists.count - 1].next += 1
            }
            let text = StructuredTextBuilder.collapse(Self.inlineText(of: node, skipping: ["ul", "ol"]))
            if !text.isEmpty { builder.line(indent + marker + " " + text) }
            for child in node.children where child.isElement && (child.localName == "ul" || child.localName == "ol") {
                visit(child, depth: depth + 1)
            }
        default:
            let isBlock = Self.blocks.contains(name) || inContent
            let isSectioning = name == "article" || name == "main" || name == "section"
            if isBlock { endBlock() }
            if name == "pre" { preformatted += 1 }
            if isSectioning { sectioning += 1 }
            for child in node.children { visit(child, depth: depth + 1) }
            if isSectioning { sectioning -= 1 }
            if name == "pre" { preformatted -= 1 }
            if isBlock { endBlock() }
        }
    }

    private mutating func appendText(_ text: String) {
        if preformatted > 0 {
            inline += text
        } else {
            // HTML white space collapses; a single space stands for any run of it.
            var collapsed = StructuredTextBuilder.collapse(text)
            if text.first?.isWhitespace == true { collapsed = " " + collapsed }
            if text.last?.isWhitespace == true && !collapsed.isEmpty { collapsed += " " }
            inline += collapsed
        }
    }

    /// Ends the paragraph being read: a block of its own.
    private mutating func endBlock() {
        let text = inline
        inline = ""
        guard text.contains(where: { !$0.isWhitespace }) else { return }
        builder.paragraph(preformatted > 0 ? text : Self.tidy(text))
    }

    private mutating func table(_ node: xmlNodePtr) {
        var rows: [xmlNodePtr] = []
        func collectRows(_ node: xmlNodePtr) {
            for child in node.children where child.isElement {
                switch child.localName {
                case "tr": rows.append(child)
                case "thead", "tbody", "tfoot": collectRows(child)
                case "caption": builder.paragraph(StructuredTextBuilder.collapse(Self.inlineText(of: child)))
                default: break
                }
            }
        }
        collectRows(node)
        for row in rows {
            let cells = row.children.filter { $0.isElement && ($0.localName == "td" || $0.localName == "th") }
                .map { StructuredTextBuilder.collapse(Self.inlineText(of: $0)) }
            if cells.contains(where: { !$0.isEmpty }) { builder.line(cells.joined(separator: " | ")) }
        }
        builder.endBlock()
    }

    /// How deep the walker follows the structure (headings, lists, tables, blocks) by recursion; below
    /// that, text is read by ``inlineText(of:skipping:)``, which needs no stack.
    static let structuredDepth = 512

    /// Space-separated text of an element, alt text included, dropped elements left out.
    ///
    /// Iterative (a pre-order walk over the tree's own child, sibling and parent links), so any depth of
    /// nesting is read in full without growing the stack.
    static func inlineText(of root: xmlNodePtr, skipping skipped: Set<String> = []) -> String {
        var parts: [String] = []
        func close(_ element: xmlNodePtr) {
            if element.localName == "br" || blocks.contains(element.localName) { parts.append(" ") }
        }
        var node = root
        while true {
            if node.isText {
                parts.append(node.content)
            } else if node.isElement, !dropped.contains(node.localName), !skipped.contains(node.localName),
                !isHidden(node)
            {
                if node.localName == "img", let alt = node.attribute("alt"), !alt.isEmpty {
                    parts.append("[image: \(alt)]")
                }
                if let child = node.pointee.children {
                    node = child
                    continue
                }
                close(node)
            }
            // On to the next node in document order, closing the elements walked out of.
            while node != root, node.pointee.next == nil, let parent = node.pointee.parent {
                node = parent
                close(node)
            }
            guard node != root, let next = node.pointee.next else { break }
            node = next
        }
        return parts.joined()
    }

    /// All text under a node.
    static func text(of node: xmlNodePtr) -> String {
        guard let content = xmlNodeGetContent(node) else { return "" }
        defer { sluice_xml_free(content) }
        return String(cString: content)
    }

    /// A heading's text without the permalink marks documentation generators append (`#`, `¶`, `§`).
    static func headingTitle(_ text: String) -> String {
        var title = Substring(StructuredTextBuilder.collapse(text))
        while let last = title.last, last == "#" || last == "¶" || last == "§" || last.isWhitespace {
            title.removeLast()
        }
        return title.isEmpty ? StructuredTextBuilder.collapse(text) : String(title)
    }

    /// An in-page "Skip to content" link for keyboard users: boilerplate.
    static func isSkipLink(_ node: xmlNodePtr) -> Bool {
        guard node.attribute("href")?.hasPrefix("#") == true else { return false }
        return StructuredTextBuilder.collapse(text(of: node)).lowercased().hasPrefix("skip to")
    }

    /// `hidden`, `aria-hidden="true"` or a navigation role.
    static func isHidden(_ node: xmlNodePtr) -> Bool {
        if node.attribute("hidden") != nil { return true }
        if node.attribute("aria-hidden")?.lowercased() == "true" { return true }
        let role = node.attribute("role")?.lowercased()
        return role == "navigation" || role == "banner" || role == "contentinfo" || role == "complementary"
    }

    /// Trims each line and folds spaces within it.
    static func tidy(_ text: String) -> String {
        text.split(separator: "\n").map { StructuredTextBuilder.collapse(String($0)) }.filter { !$0.isEmpty }
            .joined(separator: "\n")
    }
}
