import Foundation
import SluiceCore

extension ExtractedText {
    /// Removes U+0000 from the text, the heading paths and the metadata. No store can be trusted to hold it
    /// (PostgreSQL's `text` and `jsonb` cannot; libpq would cut a parameter there), and it carries nothing a
    /// reader searches for: removed once here, every store keeps the same text and the same chunk hashes.
    /// A reader of untrusted bytes can produce it (a JSON `\u0000` escape, a PDF's text layer).
    mutating func removeNUL() {
        guard containsNUL else { return }
        for index in sections.indices {
            sections[index].text = Self.withoutNUL(sections[index].text)
            sections[index].headingPath = sections[index].headingPath.map(Self.withoutNUL)
            sections[index].metadata = Self.withoutNUL(sections[index].metadata)
        }
        metadata = Self.withoutNUL(metadata)
    }

    /// Every document's text is asked once: `memchr` over its bytes (by `Sequence.contains` it was 0.8% of a
    /// latency-bound load's CPU).
    private var containsNUL: Bool {
        func has(_ text: String) -> Bool {
            UTF8Decoding.withBytes(of: text) { bytes in
                guard let start = bytes.baseAddress else { return false }
                return memchr(start, 0, bytes.count) != nil
            }
        }
        func has(_ values: [String: String]) -> Bool { values.contains { has($0.key) || has($0.value) } }
        return has(metadata)
            || sections.contains { has($0.text) || $0.headingPath.contains(where: has) || has($0.metadata) }
    }

    private static func withoutNUL(_ text: String) -> String {
        text.utf8.contains(0) ? String(decoding: text.utf8.filter { $0 != 0 }, as: UTF8.self) : text
    }

    private static func withoutNUL(_ values: [String: String]) -> [String: String] {
        Dictionary(values.map { (withoutNUL($0.key), withoutNUL($0.value)) }) { first, _ in first }
    }
}
