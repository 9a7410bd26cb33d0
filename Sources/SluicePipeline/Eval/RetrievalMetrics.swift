import Foundation
import SluiceCore

/// How a ranked list of results scores against a judged query (`sluice eval`): pure functions, the rules
/// Benchmarks/retrieval/README.md ("Scoring") states.
///
/// A result **hits** a relevant entry when one of the documents it stands for (its own, and under
/// collapsing every copy it lists in `duplicates`) has the entry's key and page (when the entry gives
/// one), and its text holds the entry's phrase with runs of white space compared as one space. Each entry
/// counts once, at the rank of the first result that hits it.
package enum RetrievalMetrics {
    /// A retrieved result as the scoring sees it: where it is stored and its text.
    package struct Retrieved: Sendable, Hashable {
        /// The documents (and pages) holding this text: the result's own first, then its copies.
        package var holders: [Holder]
        package var text: String

        package struct Holder: Sendable, Hashable {
            package var key: String
            package var page: Int?
            package init(key: String, page: Int? = nil) {
                self.key = key
                self.page = page
            }
        }

        package init(holders: [Holder], text: String) {
            self.holders = holders
            self.text = text
        }

        package init(_ result: SearchResult) {
            holders =
                [Holder(key: result.documentKey, page: result.page)]
                + result.duplicates.map { Holder(key: $0.documentKey, page: $0.page) }
            text = result.text
        }
    }

    /// How one query's results scored.
    package struct QueryScore: Sendable, Hashable {
        /// The cutoff: the results looked at.
        package var k: Int
        /// Per relevant entry (in the query's order), the 1-based rank of the first result that hit it
        /// within the first k, or nil.
        package var entryRanks: [Int?]
        /// The rank of the first result that hit any entry, or nil.
        package var firstHit: Int?
        /// Normalized discounted cumulative gain at k, binary gains: a result that hits an entry not hit
        /// before gains 1 / log2(rank + 1), once however many entries it hits; the ideal is min(entries, k)
        /// hits at ranks 1, 2, ….
        package var ndcg: Double

        /// The share of the entries hit within the first `cutoff` results (at most k).
        package func recall(at cutoff: Int) -> Double {
            guard !entryRanks.isEmpty else { return 0 }
            let found = entryRanks.count { $0.map { $0 <= min(cutoff, k) } ?? false }
            return Double(found) / Double(entryRanks.count)
        }

        /// 1 / the rank of the first result that hits an entry; 0 when none does within k.
        package var reciprocalRank: Double { firstHit.map { 1 / Double($0) } ?? 0 }
    }

    /// Scores the first `k` of `results` against `relevant`.
    package static func score(_ results: [Retrieved], relevant: [JudgedQuery.Relevant], k: Int) -> QueryScore {
        var ranks = [Int?](repeating: nil, count: relevant.count)
        var firstHit: Int?
        var dcg = 0.0
        let phrases = relevant.map { $0.contains.map(squash) }
        for (index, result) in results.prefix(k).enumerated() {
            let rank = index + 1
            let found = hits(result, relevant, phrases: phrases)
            if !found.isEmpty, firstHit == nil { firstHit = rank }
            let new = found.filter { ranks[$0] == nil }
            for entry in new { ranks[entry] = rank }
            // A result gains once, however many entries it hits (copies listed under it).
            if !new.isEmpty { dcg += 1 / log2(Double(rank + 1)) }
        }
        var ideal = 0.0
        for rank in 1...max(1, min(relevant.count, k)) where rank <= relevant.count {
            ideal += 1 / log2(Double(rank + 1))
        }
        return QueryScore(k: k, entryRanks: ranks, firstHit: firstHit, ndcg: ideal > 0 ? dcg / ideal : 0)
    }

    /// The indexes of the entries of `relevant` that `result` hits.
    package static func hits(_ result: Retrieved, _ relevant: [JudgedQuery.Relevant]) -> [Int] {
        hits(result, relevant, phrases: relevant.map { $0.contains.map(squash) })
    }

    private static func hits(_ result: Retrieved, _ relevant: [JudgedQuery.Relevant], phrases: [[UInt8]?]) -> [Int] {
        var text: [UInt8]?
        var found: [Int] = []
        for (index, entry) in relevant.enumerated() {
            let placed = result.holders.contains { holder in
                holder.key == entry.key && (entry.page == nil || holder.page == entry.page)
            }
            guard placed else { continue }
            if let phrase = phrases[index] {
                if text == nil { text = squash(result.text) }
                guard contains(text!, phrase) else { continue }
            }
            found.append(index)
        }
        return found
    }

    /// `text`'s UTF-8 with every run of white space as one space, trimmed: what Python's
    /// `re.sub(r"\s+", " ", text).strip()` gives (its `\s`, Unicode white space and the separators
    /// U+001C–U+001F), compared as code points, not as canonically equivalent characters.
    package static func squash(_ text: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        var pendingSpace = false
        for scalar in text.unicodeScalars {
            if isSpace(scalar) {
                pendingSpace = !out.isEmpty
                continue
            }
            if pendingSpace {
                out.append(0x20)
                pendingSpace = false
            }
            out.append(contentsOf: UTF8.encode(scalar)!)
        }
        return out
    }

    static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        (0x1C...0x1F).contains(scalar.value) || scalar.properties.isWhitespace
    }

    /// Whether `needle` occurs in `haystack` (bytes; the empty needle occurs everywhere).
    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty else { return true }
        guard needle.count <= haystack.count else { return false }
        let first = needle[0]
        var start = 0
        while start <= haystack.count - needle.count {
            if haystack[start] == first {
                var matched = 1
                while matched < needle.count, haystack[start + matched] == needle[matched] { matched += 1 }
                if matched == needle.count { return true }
            }
            start += 1
        }
        return false
    }
}
