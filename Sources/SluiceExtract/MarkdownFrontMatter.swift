import Foundation
import SluiceCore

/// A Markdown file's front matter: a YAML mapping between a `---` line at the very top and the next
/// `---` (or `...`) line. Its keys become metadata of the document's records (`source.front_matter`),
/// its text is left out of the chunks. Anything else at the top (a horizontal rule, YAML that is not a
/// mapping or does not parse) is left in the text as it is.
struct MarkdownFrontMatter {
    /// The values that are metadata: strings, numbers, booleans, dates, lists of strings.
    var values: [String: MetadataValue]
    /// The text after the closing line.
    var body: String

    /// The longest front matter read (a block without its closing line within it is not front matter).
    static let maxBytes = 64 << 10

    init?(_ text: String) {
        guard text.hasPrefix("---\n") else { return nil }
        let head = text.utf8.prefix(Self.maxBytes)
        var lineStart = head.index(head.startIndex, offsetBy: 4)
        var index = lineStart
        var closing: (start: String.Index, end: String.Index)?
        while index < head.endIndex {
            if head[index] == 0x0A {
                let line = text[lineStart..<index]
                if line == "---" || line == "..." {
                    closing = (lineStart, text.index(after: index))
                    break
                }
                lineStart = text.index(after: index)
            }
            index = head.index(after: index)
        }
        if closing == nil, lineStart < text.endIndex, text.utf8.count <= Self.maxBytes {
            let line = text[lineStart...]
            if line == "---" || line == "..." { closing = (lineStart, text.endIndex) }
        }
        guard let closing else { return nil }
        let yaml = String(text[text.index(text.startIndex, offsetBy: 4)..<closing.start])
        // Untrusted: bounded (aliases that multiply, keys that are lists: not front matter, left in the text).
        guard let mapping = (try? BoundedYAML.load(yaml)) as? [String: Any] else { return nil }
        values = mapping.compactMapValues(MetadataValue.init(json:))
        body = String(text[closing.end...])
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
