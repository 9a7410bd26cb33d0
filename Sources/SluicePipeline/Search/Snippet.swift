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
        // Word starts, their offsets in characters, and which query word (if any) each word is.
        var starts: [String.Index] = []
        var offsets: [Int] = []
        var hits: [String?] = []
        var index = flat.startIndex
        var offset = 0
        while index < flat.endIndex {
            while index < flat.endIndex, flat[index] == " " {
                index = flat.index(after: index)
                offset += 1
            }
            guard index < flat.endIndex else { break }
            let start = index
            starts.append(start)
            offsets.append(offset)
            while index < flat.endIndex, flat[index] != " " {
                index = flat.index(after: index)
                offset += 1
            }
            let word = words(of: String(flat[start..<index])).first
            hits.append(word.flatMap { terms.contains($0) ? $0 : nil })
        }
        let characters = offset
        // Slide a window of words whose text fits `length`; keep the one with the most distinct terms. A window's
        // characters are a difference of offsets (session 40: a walk over them with `distance(from:to:)` for
        // every word was 19% of `serve`'s CPU), and its distinct terms are counted as it slides.
        var best = (start: 0, end: 0, score: -1)
        var inWindow: [String: Int] = [:]
        func add(_ word: Int) {
            if let hit = hits[word] { inWindow[hit, default: 0] += 1 }
        }
        func remove(_ word: Int) {
            guard let hit = hits[word], let count = inWindow[hit] else { return }
            inWindow[hit] = count == 1 ? nil : count - 1
        }
        var end = -1  // the window is the words first...end
        for first in starts.indices {
            if first > 0 { remove(first - 1) }
            if end < first {
                end = first
                add(first)
            }
            // Word end + 1 joins when the text up to the next word's start (what the snippet keeps) fits.
            while end + 1 < starts.count,
                (end + 2 < starts.count ? offsets[end + 2] : characters) - offsets[first] <= length
            {
                end += 1
                add(end)
            }
            let score = inWindow.count
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
