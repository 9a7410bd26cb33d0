import Foundation
import SluiceCore

/// Collects a structured document's text as Markdown-like sections: a new section at each heading,
/// starting with the heading as a Markdown line (`## Title`) and carrying the heading path; blocks
/// (paragraphs, lists, tables) separated by blank lines, the lines of one block (list items, table rows)
/// by single line breaks. The chunker then splits at headings first and paragraphs next.
///
/// Everything taken is charged to a ``TextBudget`` (`extract.max_text_mb`): once past it, nothing more is
/// taken (``exceeded`` says why, and ``finish()`` throws it), so the walker feeding the builder can stop.
struct StructuredTextBuilder {
    /// What has been charged: the text taken, and each section's heading path and metadata.
    private(set) var budget: TextBudget
    /// Set once the budget is spent: the builder takes nothing more.
    private(set) var exceeded: SluiceError?
    private var sections: [TextSection] = []
    private var path: [(level: Int, title: String)] = []
    private var blocks: [String] = []
    private var lines: [String] = []
    /// How many of `blocks` are heading lines (they come first).
    private var headingBlocks = 0

    init(budget: TextBudget = TextBudget(limit: .max)) { self.budget = budget }

    /// Charges `count` bytes; false (and nothing more is taken) once past the budget.
    private mutating func take(_ count: Int) -> Bool {
        guard exceeded == nil else { return false }
        do {
            try budget.charge(count)
            return true
        } catch {
            exceeded = SluiceError.wrap(error, as: .textTooLarge)
            return false
        }
    }

    /// Starts a section under a heading of `level` (1 = outermost).
    ///
    /// A heading with no text of its own before the next heading stays as a line at the top of the
    /// next section, so its words are still indexed.
    mutating func heading(_ title: String, level: Int) {
        let title = Self.collapse(title)
        guard !title.isEmpty, take(title.utf8.count + level + 1) else { return }
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
        if !text.isEmpty, take(text.utf8.count) { blocks.append(text) }
    }

    /// Adds a line to the current block (a list item, a table row); leading indentation is kept.
    mutating func line(_ text: String) {
        var text = Substring(text)
        while let last = text.last, last.isWhitespace { text.removeLast() }
        if !text.isEmpty, take(text.utf8.count) { lines.append(String(text)) }
    }

    /// Closes the current block of lines.
    mutating func endBlock() {
        if !lines.isEmpty { blocks.append(lines.joined(separator: "\n")) }
        lines = []
    }

    /// The sections collected, in order.
    /// - Throws: ``SluiceError/Code/textTooLarge`` when the budget was passed.
    mutating func finish() throws -> [TextSection] {
        flushSection()
        if let exceeded { throw exceeded }
        return sections
    }

    private mutating func flushSection(unlessOnlyHeadings: Bool = false) {
        endBlock()
        let onlyHeadings = blocks.count == headingBlocks
        if !blocks.isEmpty && !(unlessOnlyHeadings && onlyHeadings), take(path.reduce(0) { $0 + $1.title.utf8.count }) {
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
