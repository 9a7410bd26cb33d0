import Foundation

/// A passage quoted word for word in an answer: `"…"` or `“…”` of at least ``minimumWords`` words, with the
/// passages the answer cites for it.
///
/// The citations of a quotation are the markers right after it (`"…" [1][2]`), else the first markers
/// after it in its sentence (`"…" is what the guide says [2].`), else those before it in its sentence
/// (`As [2] puts it, "…"`); a quotation with none is checked against every passage.
struct AnswerQuotation: Hashable {
    /// The quoted text, as the answer has it.
    var text: String
    /// The numbers of the markers that cite it; empty when its sentence has none.
    var cited: [Int]

    /// Shorter quotations are names and terms (`"xz"`, `"--keep"`), not claims of a passage's words.
    static let minimumWords = 3

    /// The quotations of `answer`, in order, with the markers that cite them.
    static func all(in answer: String) -> [AnswerQuotation] {
        let markers = AnswerCitations.markers(in: answer)
        var found: [AnswerQuotation] = []
        var index = answer.startIndex
        while let open = answer[index...].firstIndex(where: { $0 == "\"" || $0 == "“" }) {
            let closing: Character = answer[open] == "“" ? "”" : "\""
            let start = answer.index(after: open)
            guard let close = answer[start...].firstIndex(of: closing) else { break }
            index = answer.index(after: close)
            let text = answer[start..<close].trimmingCharacters(in: .whitespacesAndNewlines)
            guard text.split(whereSeparator: \.isWhitespace).count >= minimumWords else { continue }
            let sentence = sentence(around: open..<index, in: answer)
            let after = markers.filter { $0.range.lowerBound >= index && $0.range.upperBound <= sentence.upperBound }
            let before = markers.filter { $0.range.lowerBound >= sentence.lowerBound && $0.range.upperBound <= open }
            let citing =
                adjacent(after, from: index, in: answer) ?? after.first.map { first in
                    adjacent(after, from: first.range.lowerBound, in: answer) ?? [first]
                } ?? before
            found.append(AnswerQuotation(text: text, cited: citing.flatMap(\.numbers)))
        }
        return found
    }

    /// The run of `markers` that starts at `index` after spaces and `,;:.` and goes on with only spaces
    /// between markers (`[1] [2][3]`); nil when no marker starts there.
    private static func adjacent(
        _ markers: [AnswerCitations.Marker],
        from index: String.Index,
        in text: String
    ) -> [AnswerCitations.Marker]? {
        var position = text[index...].firstIndex { !$0.isWhitespace && !",;:.".contains($0) } ?? text.endIndex
        var run: [AnswerCitations.Marker] = []
        for marker in markers where marker.range.lowerBound >= position {
            guard marker.range.lowerBound == position else { break }
            run.append(marker)
            position = text[marker.range.upperBound...].firstIndex { !$0.isWhitespace } ?? text.endIndex
        }
        return run.isEmpty ? nil : run
    }

    /// Whether the quotation is in `passage`: case, runs of white space, typographic quotes and dashes and a
    /// closing full stop do not count; an ellipsis (`...`, `…`) stands for words left out, so each part
    /// must be there, in order.
    func isQuoted(from passage: String) -> Bool {
        let haystack = Self.normalized(passage)
        var from = haystack.startIndex
        let parts = text.replacingOccurrences(of: "...", with: "…").split(separator: "…")
        let wanted = parts.map { Self.normalized(String($0)) }.filter { !$0.isEmpty }
        guard !wanted.isEmpty else { return true }
        for part in wanted {
            guard let found = haystack.range(of: part, range: from..<haystack.endIndex) else { return false }
            from = found.upperBound
        }
        return true
    }

    /// Lower case, one space for each run of white space, straight quotes and hyphens, no punctuation at
    /// either end.
    static func normalized(_ text: String) -> String {
        var folded = ""
        var space = false
        for character in text.lowercased() {
            if character.isWhitespace {
                space = !folded.isEmpty
                continue
            }
            if space { folded.append(" ") }
            space = false
            switch character {
            case "‘", "’", "`": folded.append("'")
            case "“", "”": folded.append("\"")
            case "–", "—", "‐": folded.append("-")
            default: folded.append(character)
            }
        }
        return folded.trimmingCharacters(in: CharacterSet(charactersIn: ".,;:!?'\" "))
    }

    /// The sentence holding `range`: from after the last `.`, `!`, `?` or line break before it (outside
    /// the range) to the first after it.
    private static func sentence(around range: Range<String.Index>, in text: String) -> Range<String.Index> {
        func ends(_ index: String.Index) -> Bool {
            let character = text[index]
            if character.isNewline { return true }
            guard ".!?".contains(character) else { return false }
            let next = text.index(after: index)
            return next == text.endIndex || text[next].isWhitespace
        }
        var start = range.lowerBound
        while start > text.startIndex, !ends(text.index(before: start)) { start = text.index(before: start) }
        var end = range.upperBound
        while end < text.endIndex, !ends(end) { end = text.index(after: end) }
        return start..<end
    }
}
