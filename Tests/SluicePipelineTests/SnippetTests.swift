import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluicePipeline

/// `Snippet.make` picks the window of about `length` characters holding the most distinct query words. It
/// measured each candidate window with `String.distance(from:to:)`, a walk over its characters, for every word of
/// the passage: 19% of `serve`'s CPU on vector searches (session 40). Its windows are now measured from character
/// offsets counted once; the snippets must be exactly those of the walk, graphemes of several scalars included.
@Suite struct SnippetTests {
    /// The algorithm before session 40, kept as the reference the faster one must agree with.
    static func reference(text: String, query: String, length: Int = 240) -> String {
        let flat = Chunk.normalize(text)
        guard flat.count > length else { return flat }
        let terms = Set(Snippet.words(of: query))
        var starts: [String.Index] = []
        var hits: [String?] = []
        var index = flat.startIndex
        while index < flat.endIndex {
            while index < flat.endIndex, flat[index] == " " { index = flat.index(after: index) }
            guard index < flat.endIndex else { break }
            let start = index
            while index < flat.endIndex, flat[index] != " " { index = flat.index(after: index) }
            starts.append(start)
            let word = Snippet.words(of: String(flat[start..<index])).first
            hits.append(word.flatMap { terms.contains($0) ? $0 : nil })
        }
        var best = (start: 0, end: 0, score: -1)
        var end = 0
        for first in starts.indices {
            end = max(end, first)
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

    /// Words of one to several characters, some of several scalars a character (accents as combining marks, an
    /// emoji sequence, a flag, CJK), and runs of spaces and newlines between them.
    static let vocabulary = [
        "checkpoint", "resume", "run", "the", "a", "e\u{301}te\u{301}", "cafe\u{301}", "👩‍💻", "🇫🇷", "東京", "日本語",
        "naïve", "x", "LMDB", "kill", "-9", "über", "straße", "ok.", "(see", "below)", "1,234", "ŉ", "Ǆ",
    ]

    @Test("the same snippet as the character walk, on random passages and queries", arguments: 0..<12)
    func sameAsTheWalk(seed: Int) {
        var random = SplitMix64(seed: UInt64(0x5A1_9E7 + seed))
        for _ in 0..<40 {
            let words = (0..<Int(random.next() % 400)).map { _ in
                Self.vocabulary[Int(random.next() % UInt64(Self.vocabulary.count))]
            }
            let separators = [" ", " ", " ", "  ", "\n", " \n "]
            var text = ""
            for word in words {
                text += word + separators[Int(random.next() % UInt64(separators.count))]
            }
            let query = (0..<Int(1 + random.next() % 4)).map { _ in
                Self.vocabulary[Int(random.next() % UInt64(Self.vocabulary.count))]
            }.joined(separator: " ")
            let length = [0, 1, 5, 40, 120, 240, 1000][Int(random.next() % 7)]
            #expect(
                Snippet.make(text: text, query: query, length: length)
                    == Self.reference(text: text, query: query, length: length),
                "length \(length), query \(query), text \(text.debugDescription)"
            )
        }
    }

    @Test("edge cases: no query word, every word a query word, one long word, only spaces")
    func edgeCases() {
        let long = String(repeating: "ab", count: 300)
        let cases: [(String, String, Int)] = [
            (String(repeating: "filler words here ", count: 40), "nothing matches", 60),
            (String(repeating: "checkpoint resume ", count: 40), "checkpoint resume", 60),
            (long + " tail words", "tail", 50),
            ("   \n  ", "x", 0),
            ("one", "one", 0),
            (String(repeating: "👩‍💻 ", count: 200) + "東京 end", "東京", 30),
        ]
        for (text, query, length) in cases {
            #expect(
                Snippet.make(text: text, query: query, length: length)
                    == Self.reference(text: text, query: query, length: length),
                "\(query) \(length)"
            )
        }
    }
}
