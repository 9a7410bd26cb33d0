import Foundation
import SluiceCore

/// Collects a structured document's text as Markdown-like sections: a new section at each heading,
/// starting with the heading as a Markdown line (`## Title`) and carrying the heading path; blocks
/// (paragraphs, lists, tables) separated by blank lines, the lines of one block (list items, table rows)
/// by single line breaks. The chunker then splits at headings first and paragraphs next.
struct StructuredTextBuilder {
    private var sections: [TextSection] = []
    private var path: [(level: Int, title: String)] = []
    private var blocks: [String] = []
    private var lines: [String] = []
    /// How many of `blocks` are heading lines (they come first).
    private var headingBlocks = 0

    /// Starts a section under a heading of `level` (1 = outermost).
    ///
    /// A heading with no text of its own before the next heading stays as a line at the top of the
    /// next section, so its words are still indexed.
    mutating func heading(_ title: String, level: Int) {
        let title = Self.collapse(title)
        guard !title.isEmpty else { return }
        endBlock()
        let carried = blocks.count == headingBlocks ? blocks : []
        flushSection(unlessOnlyHeadings: true)
        while let last = path.last, last.level >= level { path.removeLast() }
        path.append((level, title))
        blocks = carried + [String(repeating: "#", count: min(max(level, 1), 6)) + " " + title]
        headingBlocks = blocks.count
    }

    /// Adds a paragraph (a block of its own).
    mutating func paragraph(_ text: String) {
        endBlock()
        let text = Self.trimLines(text)
        if !text.isEmpty { blocks.append(text) }
    }

    /// Adds a line to the current block (a list item, a table row); leading indentation is kept.
    mutating func line(_ text: String) {
        var text = Substring(text)
        while let last = text.last, last.isWhitespace { text.removeLast() }
        if !text.isEmpty { lines.append(String(text)) }
    }

    /// Closes the current block of lines.
    mutating func endBlock() {
        if !lines.isEmpty { blocks.append(lines.joined(separator: "\n")) }
        lines = []
    }

    /// The sections collected, in order.
    mutating func finish() -> [TextSection] {
        flushSection()
        return sections
    }

    private mutating func flushSection(unlessOnlyHeadings: Bool = false) {
        endBlock()
        let onlyHeadings = blocks.count == headingBlocks
        if !blocks.isEmpty && !(unlessOnlyHeadings && onlyHeadings) {
            sections.append(TextSection(text: blocks.joined(separator: "\n\n"), headingPath: path.map(\.title)))
        }
        blocks = []
        headingBlocks = 0
    }

    /// Folds runs of white space (HTML's rendering of text) to single spaces and trims.
    static func collapse(_ text: String) -> String {
        text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }

    /// Trims white space at both ends of the text and of each of its lines, and drops blank lines.
    static func trimLines(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: true)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
            .joined(separator: "\n")
    }
}
