import Foundation
import SluiceCore

/// JSON and JSON Lines: the text of string values, each on a line of its own after its JSON path
/// (`$.items[3].body: …`), in document order. Numbers, booleans, nulls and keys are not indexed.
///
/// - A JSON document becomes a section per record: per child of the outermost container that has more
///   than one (heading path: the container's path, then the record's, e.g. `$.items` > `$.items[3]`),
///   so that the chunker prefers to split between records.
/// - JSON Lines (`.jsonl`, `.ndjson`, or any file whose first line is a whole JSON value followed by
///   more): a section per line, with the line number in the section's metadata (`line`). A bad line
///   fails the document, naming the line and column.
/// - ``fields`` limits what is indexed (see `JSONFieldPattern`); empty means every string.
/// - Nesting deeper than ``maxDepth`` fails with ``SluiceError/Code/tooDeep``; the reader keeps its
///   own stack, so no depth can overflow the thread's.
public struct JSONExtractor: Extractor {
    public let fields: [String]
    public let maxDepth: Int
    private let patterns: [JSONFieldPattern]

    public init(fields: [String] = [], maxDepth: Int = 64) {
        self.fields = fields
        self.maxDepth = maxDepth
        patterns = fields.map(JSONFieldPattern.init)
    }

    public var name: String { "json" }

    /// Which values are indexed shapes the chunks (``Extractor/shapingSettings``); the depth limit only
    /// decides whether a document fails.
    public var shapingSettings: [String: String] { ["extract.json.fields": fields.joined(separator: ",")] }

    static let jsonExtensions: Set<String> = ["json", "geojson", "jsonld", "webmanifest"]
    static let linesExtensions: Set<String> = ["jsonl", "ndjson", "jsonlines"]

    public func accepts(_ input: ExtractionInput) -> Bool {
        let ext = input.fileURL.pathExtension.lowercased()
        if Self.jsonExtensions.contains(ext) || Self.linesExtensions.contains(ext) { return true }
        // Text, Markdown and source files stay text even when they start with `[` (`[1] …`, `[section]`).
        if TextExtractor.knownTextExtensions.contains(ext) { return false }
        // By content: `{"` / `{}` or `[` then a value that is not a bare word (`[section]` is INI, not JSON).
        let bytes = input.bytes.prefix(4096)
        var index = bytes.startIndex
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index += 3 }
        func skip() { while index < bytes.endIndex, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 } }
        skip()
        guard index < bytes.endIndex, bytes[index] == UInt8(ascii: "{") || bytes[index] == UInt8(ascii: "[") else {
            return false
        }
        let opener = bytes[index]
        index += 1
        skip()
        guard index < bytes.endIndex else { return false }
        let next = bytes[index]
        if opener == UInt8(ascii: "{") { return next == UInt8(ascii: "\"") || next == UInt8(ascii: "}") }
        return [UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: "\""), UInt8(ascii: "]"), UInt8(ascii: "-")]
            .contains(next)
            || (0x30...0x39).contains(next)
    }

    public func extract(_ input: ExtractionInput) throws -> ExtractedText {
        var bytes = input.bytes
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        guard bytes.contains(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) else {
            throw SluiceError(
                .emptyDocument,
                bytes.isEmpty ? "zero-byte file: nothing to index" : "the file holds only white space"
            )
        }
        let scanner = JSONScanner(bytes: bytes, maxDepth: maxDepth)
        let ext = input.fileURL.pathExtension.lowercased()
        if Self.linesExtensions.contains(ext) { return try lines(scanner, budget: input.textBudget()) }
        do {
            return try document(scanner, budget: input.textBudget())
        } catch let failure as JSONScanner.Failure {
            // A first line that is a whole value, followed by more on the lines after it: JSON Lines without
            // the extension. Decided by where the value ends and the rest starts, never by the message.
            if case .trailingContent(let valueEnd) = failure.kind, let firstNewline = bytes.firstIndex(of: 0x0A),
                valueEnd <= firstNewline, failure.offset > firstNewline
            {
                return try lines(scanner, budget: input.textBudget())
            }
            throw error(failure, in: bytes, line: nil)
        }
    }

    /// Each value's line is charged to `budget` as it is made: its path (a huge key above many values
    /// multiplies) and its text; past the budget, no more lines are kept.
    private func document(_ scanner: JSONScanner, budget: TextBudget) throws -> ExtractedText {
        var budget = budget
        var exceeded: (any Error)?
        var entries: [(path: [JSONScanner.Step], line: String)] = []
        try scanner.scan(0..<scanner.bytes.count) { path, value in
            guard exceeded == nil, selects(path), value.contains(where: { !$0.isWhitespace }) else { return }
            let line = "\(JSONScanner.render(path)): \(value)"
            do { try budget.charge(line) } catch { exceeded = error }
            if exceeded == nil { entries.append((path, line)) }
        }
        if let exceeded { throw exceeded }
        guard !entries.isEmpty else { throw SluiceError(.emptyDocument, emptyReason) }
        return ExtractedText(sections: try Self.records(entries, budget: &budget), metadata: ["format": "json"])
    }

    /// Groups the lines by record: the children of the outermost container that has more than one
    /// (`{"4217": [...]}` gives a section per element of the array). A section's heading path is the
    /// container's path, then the record's (`$["4217"]`, `$["4217"][3]`), so the structured chunker
    /// merges small neighbouring records under their container. Each section's heading path is charged to
    /// `budget` before it is made (a huge key is in the path of every record under it).
    static func records(
        _ entries: [(path: [JSONScanner.Step], line: String)],
        budget: inout TextBudget
    ) throws -> [TextSection] {
        var depth = 1
        while entries.allSatisfy({ $0.path.count > depth }), Set(entries.map { $0.path[depth - 1] }).count == 1 {
            depth += 1
        }
        var sections: [TextSection] = []
        var current: [String] = []
        var currentKey: ArraySlice<JSONScanner.Step>?
        func flush() throws {
            guard let key = currentKey, !current.isEmpty else { return }
            let container = JSONScanner.render(Array(key.dropLast()))
            if !key.isEmpty { try budget.charge(2 * container.utf8.count) }
            let heading = key.isEmpty ? [] : [container, JSONScanner.render(Array(key))]
            sections.append(TextSection(text: current.joined(separator: "\n"), headingPath: heading))
            current = []
        }
        for entry in entries {
            let key = entry.path.prefix(depth)
            if key != currentKey {
                try flush()
                currentKey = key
            }
            current.append(entry.line)
        }
        try flush()
        return sections
    }

    private func lines(_ scanner: JSONScanner, budget: TextBudget) throws -> ExtractedText {
        var budget = budget
        var exceeded: (any Error)?
        var sections: [TextSection] = []
        var lineStart = 0
        var lineNumber = 0
        let bytes = scanner.bytes
        while lineStart < bytes.count {
            lineNumber += 1
            let lineEnd = bytes[lineStart...].firstIndex(of: 0x0A) ?? bytes.count
            defer { lineStart = lineEnd + 1 }
            guard bytes[lineStart..<lineEnd].contains(where: { ![0x20, 0x09, 0x0D].contains($0) }) else { continue }
            var text: [String] = []
            do {
                try scanner.scan(lineStart..<lineEnd) { path, value in
                    guard exceeded == nil, selects(path), value.contains(where: { !$0.isWhitespace }) else { return }
                    let line = "\(JSONScanner.render(path)): \(value)"
                    do { try budget.charge(line) } catch { exceeded = error }
                    if exceeded == nil { text.append(line) }
                }
            } catch {
                throw self.error(error, in: bytes, line: (lineNumber, lineStart))
            }
            if let exceeded { throw exceeded }
            if !text.isEmpty {
                sections.append(TextSection(text: text.joined(separator: "\n"), metadata: ["line": String(lineNumber)]))
            }
        }
        guard !sections.isEmpty else { throw SluiceError(.emptyDocument, emptyReason) }
        return ExtractedText(sections: sections, metadata: ["format": "jsonl"])
    }

    private var emptyReason: String {
        fields.isEmpty
            ? "the JSON holds no string values"
            : "no string value matches extract.json.fields (\(fields.joined(separator: ", ")))"
    }

    /// Whether a value at `path` is indexed: no patterns, or one matching it or one of its ancestors.
    private func selects(_ path: [JSONScanner.Step]) -> Bool {
        if patterns.isEmpty { return true }
        for length in stride(from: path.count, through: 0, by: -1) {
            let prefix = Array(path.prefix(length))
            if patterns.contains(where: { $0.matches(prefix) }) { return true }
        }
        return false
    }

    /// The failure as a ``SluiceError`` naming line and column (of the file, or of the JSON Lines line).
    private func error(
        _ failure: JSONScanner.Failure,
        in bytes: [UInt8],
        line: (number: Int, start: Int)?
    ) -> SluiceError {
        let position: String
        if let line {
            position = "line \(line.number), column \(failure.offset - line.start + 1)"
        } else {
            let before = bytes[..<min(failure.offset, bytes.count)]
            let lineNumber = before.reduce(1) { $0 + ($1 == 0x0A ? 1 : 0) }
            let lineStart = (before.lastIndex(of: 0x0A) ?? -1) + 1
            position = "line \(lineNumber), column \(failure.offset - lineStart + 1)"
        }
        if failure.tooDeep {
            return SluiceError(
                .tooDeep,
                "JSON \(failure.message) at \(position), over extract.json.max_depth (\(maxDepth))"
            )
        }
        return SluiceError(.malformed, "invalid JSON at \(position): \(failure.message)")
    }
}
