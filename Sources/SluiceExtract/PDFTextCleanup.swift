/// Document-level clean-up of PDF page text: hyphenation at line ends and repeated headers and footers.
///
/// Pure functions over strings, so they are the same in process and in worker processes, and testable
/// without a PDF.
enum PDFTextCleanup {
    /// Joins words hyphenated at a line end: "extrac-\ntion" → "extraction\n"-style, keeping the line
    /// structure (the joined word moves to the first line). Only a hyphen (or soft hyphen) after a
    /// letter, followed by a line that starts with a lower-case letter, is taken as hyphenation:
    /// "GPL-\n2" and "see-\nAlso" stay as they are.
    static func joinHyphenatedLines(_ text: String) -> String {
        // Most pages have no hyphen at a line end: a byte scan settles that without walking Characters.
        guard hasHyphenAtLineEnd(text) else { return text }
        // Line feeds are single bytes, so splitting the UTF-8 view cuts at Character boundaries.
        var lines = text.utf8.split(separator: 0x0A, omittingEmptySubsequences: false).map { Substring($0) }
        var index = 0
        while index + 1 < lines.count {
            let line = lines[index]
            guard let last = line.last, last == "-" || last == "\u{AD}",
                let beforeHyphen = line.dropLast().last, beforeHyphen.isLetter, beforeHyphen != "-"
            else {
                index += 1
                continue
            }
            let next = lines[index + 1]
            let leading = next.prefix { $0 == " " || $0 == "\t" }
            let rest = next.dropFirst(leading.count)
            guard let first = rest.first, first.isLowercase else {
                index += 1
                continue
            }
            // Move the rest of the word up; the remainder of the next line stays on its line.
            let word = rest.prefix { !$0.isWhitespace }
            let remainder = rest.dropFirst(word.count).drop { $0 == " " }
            lines[index] = Substring(String(line.dropLast()) + word)
            lines[index + 1] = Substring(String(leading) + remainder)
            if remainder.isEmpty {
                lines.remove(at: index + 1)
                continue  // the joined line may end in a hyphenated word again
            }
            index += 1
        }
        return lines.joined(separator: "\n")
    }

    /// Whether a hyphen-minus or a soft hyphen (UTF-8 C2 AD) ends a line of `text`.
    static func hasHyphenAtLineEnd(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            var previous: UInt8 = 0
            var beforePrevious: UInt8 = 0
            for byte in bytes {
                if byte == 0x0A && (previous == 0x2D || (previous == 0xAD && beforePrevious == 0xC2)) { return true }
                beforePrevious = previous
                previous = byte
            }
            return false
        }
    }

    /// Removes running headers and footers: a line at the same position among the first or last
    /// `edgeLines` non-blank lines of a page that recurs there, digits ignored (so "Page 3 of 9" matches
    /// "Page 4 of 9"), on at least half of the pages (and at least 3). Documents of fewer than 3 pages
    /// are left alone.
    static func stripRepeatedEdges(_ pages: [String], edgeLines: Int = 2) -> [String] {
        guard pages.count >= 3 else { return pages }
        let split = pages.map { $0.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }
        func edges(_ lines: [String]) -> (top: [Int], bottom: [Int]) {
            let nonBlank = lines.indices.filter { !lines[$0].allSatisfy(\.isWhitespace) }
            return (Array(nonBlank.prefix(edgeLines)), Array(nonBlank.suffix(edgeLines)))
        }
        var topCounts: [String: Int] = [:]
        var bottomCounts: [String: Int] = [:]
        // Keyed by position from the edge and the normalized line.
        func topKeys(_ lines: [String], _ top: [Int]) -> [String] {
            top.enumerated().map { "\($0.offset)|\(normalize(lines[$0.element]))" }
        }
        func bottomKeys(_ lines: [String], _ bottom: [Int]) -> [String] {
            bottom.reversed().enumerated().map { "\($0.offset)|\(normalize(lines[$0.element]))" }
        }
        for lines in split {
            let (top, bottom) = edges(lines)
            for key in Set(topKeys(lines, top)) { topCounts[key, default: 0] += 1 }
            for key in Set(bottomKeys(lines, bottom)) { bottomCounts[key, default: 0] += 1 }
        }
        let threshold = max(3, (pages.count + 1) / 2)
        let repeatedTop = Set(topCounts.filter { $0.value >= threshold }.keys)
        let repeatedBottom = Set(bottomCounts.filter { $0.value >= threshold }.keys)
        guard !repeatedTop.isEmpty || !repeatedBottom.isEmpty else { return pages }
        return split.map { lines in
            let (top, bottom) = edges(lines)
            var drop = Set<Int>()
            for (index, key) in zip(top, topKeys(lines, top)) where repeatedTop.contains(key) { drop.insert(index) }
            for (index, key) in zip(bottom.reversed(), bottomKeys(lines, bottom)) where repeatedBottom.contains(key) {
                drop.insert(index)
            }
            return lines.indices.filter { !drop.contains($0) }.map { lines[$0] }.joined(separator: "\n")
        }
    }

    /// A line with white space folded and every run of digits replaced by `#`.
    private static func normalize(_ line: String) -> String {
        var out = ""
        var inDigits = false
        var pendingSpace = false
        for character in line {
            if character.isWhitespace {
                pendingSpace = !out.isEmpty
                continue
            }
            if pendingSpace { out.append(" ") }
            pendingSpace = false
            if character.isNumber {
                if !inDigits { out.append("#") }
                inDigits = true
            } else {
                out.append(character)
                inDigits = false
            }
        }
        return out
    }
}
