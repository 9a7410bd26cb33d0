import Foundation
import SluiceCore

/// A Markdown file's front matter: a YAML mapping between a `---` line at the very top and the next
/// `---` (or `...`) line. Its keys become metadata of the document's records (`source.front_matter`),
/// its text is left out of the chunks. Anything else at the top (a horizontal rule, YAML that is not a
/// mapping or does not parse) is left in the text as it is.
struct MarkdownFrontMatter {
    /// The values that are metadata: strings, numbers, booleans, dates, lists of strings.
    var values: [String: MetadataValue]
    /// The keys whose values are none of those (a list holding a number or a list, a mapping): left out of
    /// the metadata, and named in the document's `front_matter_dropped` so that a readers key among them
    /// fails the document instead of making it everyone's (docs/ACCESS.md).
    var dropped: [String]
    /// The text after the closing line.
    var body: String

    /// The longest front matter read (a block without its closing line within it is not front matter).
    static let maxBytes = 64 << 10

    /// The block between the opening `---` line (the first line, spaces and tabs after the dashes allowed)
    /// and the next `---` or `...` line, with where the body starts; nil when the text has none.
    /// - Parameter from: where the opening line starts.
    static func block(in text: String, from start: String.Index) -> (yaml: String, bodyStart: String.Index)? {
        let head = text.utf8[start...].prefix(Self.maxBytes)
        func isDelimiter(_ line: Substring, closing: Bool) -> Bool {
            var word = line
            while let last = word.last, last == " " || last == "\t" || last == "\r" { word = word.dropLast() }
            return word == "---" || (closing && word == "...")
        }
        guard let firstEnd = head.firstIndex(of: 0x0A), isDelimiter(text[start..<firstEnd], closing: false) else {
            return nil
        }
        let yamlStart = text.index(after: firstEnd)
        var lineStart = yamlStart
        var index = yamlStart
        while index < head.endIndex {
            if head[index] == 0x0A {
                if isDelimiter(text[lineStart..<index], closing: true) {
                    return (String(text[yamlStart..<lineStart]), text.index(after: index))
                }
                lineStart = text.index(after: index)
            }
            index = head.index(after: index)
        }
        if lineStart < text.endIndex, text.utf8[start...].count <= Self.maxBytes,
            isDelimiter(text[lineStart...], closing: true)
        {
            return (String(text[yamlStart..<lineStart]), text.endIndex)
        }
        return nil
    }

    init?(_ text: String) {
        guard let (yaml, bodyStart) = Self.block(in: text, from: text.startIndex) else { return nil }
        // Untrusted: bounded (aliases that multiply, keys that are lists: not front matter, left in the text).
        guard let mapping = (try? BoundedYAML.load(yaml)) as? [String: Any] else { return nil }
        var values: [String: MetadataValue] = [:]
        var dropped: [String] = []
        for (key, value) in mapping {
            if let typed = MetadataValue(json: value) { values[key] = typed } else { dropped.append(key) }
        }
        self.values = values
        self.dropped = dropped.sorted()
        body = String(text[bodyStart...])
    }

    /// Why a block that looks like front matter was not read as front matter, when it may hold metadata: its
    /// YAML does not parse (a key written twice, an unclosed list, `title: a: b`), or it parses as a mapping
    /// but starts after blank lines. Nil when the text has no such block (a horizontal rule and prose are
    /// not front matter). The extractor puts it in `front_matter_problem`: with access control on, such a
    /// document fails rather than lose the readers its front matter may name.
    static func problem(in text: String) -> String? {
        var start = text.startIndex
        var skippedBlank = false
        // Blank lines before the opening line: front matter only on the first line, but its author meant one.
        while let newline = text[start...].firstIndex(of: "\n"),
            text[start..<newline].allSatisfy({ $0 == " " || $0 == "\t" || $0 == "\r" })
        {
            start = text.index(after: newline)
            skippedBlank = true
        }
        guard let (yaml, _) = block(in: text, from: start) else { return nil }
        do {
            let loaded = try BoundedYAML.load(yaml, quoting: false)
            guard loaded is [String: Any] else { return nil }
            return skippedBlank ? "front matter after blank lines (it must start on the first line)" : nil
        } catch let error as SluiceError {
            return "front matter that cannot be read (\(error.message))"
        } catch {
            return "front matter that cannot be read"
        }
    }

    /// The values as the JSON object the extractors put under `front_matter` (times as RFC 3339 text).
    var json: String {
        let object = values.mapValues(\.jsonObject)
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else {
            return "{}"
        }
        return String(decoding: data, as: UTF8.self)
    }
}
