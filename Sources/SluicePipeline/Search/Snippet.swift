import Foundation
import SluiceCore

/// The part of a passage to show under a result: the window of about `length` characters that holds the
/// most distinct query words, cut at word boundaries, with `…` where text was left out.
public enum Snippet {
    /// The query's words as snippets and keyword rankings see them (``KeywordTokenizer``): lower-cased
    /// runs of letters and digits, pairs of characters in scripts written without spaces.
    public static func words(of text: String) -> [String] { KeywordTokenizer.terms(of: text) }

    public static func make(text: String, query: String, length: Int = 240) -> String {
        let flat = Chunk.normalize(text)
        guard flat.count > length else { return flat }
        let terms = Set(words(of: query))
        // Word starts, and which query word (if any) each word is.
        var starts: [String.Index] = []
        var hits: [String?] = []
        var index = flat.startIndex
        while index < flat.endIndex {
            while index < flat.endIndex, flat[index] == " " { index = flat.index(after: index) }
            guard index < flat.endIndex else { break }
            let start = index
            while index < flat.endIndex, flat[index] != " " { index = flat.index(after: index) }
            starts.append(start)
            let word = words(of: String(flat[start..<index])).first
            hits.append(word.flatMap { terms.contains($0) ? $0 : nil })
        }
        // Slide a window of words whose text fits `length`; keep the one with the most distinct terms.
        var best = (start: 0, end: 0, score: -1)
        var end = 0
        for first in starts.indices {
            end = max(end, first)
            // Word end + 1 joins when the text up to the next word's start (what the snippet keeps) fits.
            while end + 1 < starts.count,
                flat.distance(from: starts[first], to: end + 2 < starts.count ? starts[end + 2] : flat.endIndex)
                    <= length
            {
                end += 1
            }
            let score = Set(hits[first...end].compactMap { $0 }).count
            if score > best.score { best = (first, end, score) }
            if best.score == terms.count { break }
        }
        let from = starts[best.start]
        let to = best.end + 1 < starts.count ? starts[best.end + 1] : flat.endIndex
        var snippet = String(flat[from..<to]).trimmingCharacters(in: .whitespaces)
        if best.start > 0 { snippet = "…" + snippet }
        if to < flat.endIndex { snippet += "…" }
        return snippet
    }
}
