import Foundation
import SluiceCore
import Testing

@testable import SluicePipeline

/// The scoring rules of Benchmarks/retrieval/README.md ("Scoring"), as `sluice eval` applies them.
@Suite struct RetrievalMetricsTests {
    typealias Retrieved = RetrievalMetrics.Retrieved
    typealias Relevant = JudgedQuery.Relevant

    static func result(_ key: String, page: Int? = nil, _ text: String, copies: [(String, Int?)] = []) -> Retrieved {
        Retrieved(holders: [.init(key: key, page: page)] + copies.map { .init(key: $0.0, page: $0.1) }, text: text)
    }

    static func close(_ a: Double, _ b: Double) -> Bool { abs(a - b) < 1e-12 }

    @Test func recallMeanReciprocalRankAndNDCG() {
        let relevant = [Relevant(key: "a.txt", contains: "alpha"), Relevant(key: "b.txt", contains: "beta")]
        let results = [
            Self.result("x.txt", "nothing here"), Self.result("a.txt", "the alpha line"),
            Self.result("y.txt", "alpha but elsewhere"), Self.result("b.txt", "and beta"),
        ]
        let score = RetrievalMetrics.score(results, relevant: relevant, k: 10)
        #expect(score.entryRanks == [2, 4])
        #expect(score.firstHit == 2)
        #expect(score.recall(at: 5) == 1)
        #expect(score.recall(at: 3) == 0.5)
        #expect(score.reciprocalRank == 0.5)
        let dcg = 1 / log2(3.0) + 1 / log2(5.0)
        #expect(Self.close(score.ndcg, dcg / (1 + 1 / log2(3.0))))
    }

    @Test func onlyTheFirstKResultsCount() {
        let relevant = [Relevant(key: "a.txt")]
        let results = [Self.result("x.txt", "x"), Self.result("y.txt", "y"), Self.result("a.txt", "a")]
        let score = RetrievalMetrics.score(results, relevant: relevant, k: 2)
        #expect(score.entryRanks == [nil])
        #expect(score.reciprocalRank == 0 && score.ndcg == 0 && score.recall(at: 5) == 0)
        // recall at a cutoff past k is recall at k.
        #expect(RetrievalMetrics.score(results, relevant: relevant, k: 3).recall(at: 10) == 1)
    }

    @Test func aQueryWithNoHitsScoresZero() {
        let score = RetrievalMetrics.score(
            [Self.result("x.txt", "x")],
            relevant: [Relevant(key: "a.txt"), Relevant(key: "b.txt")],
            k: 10
        )
        #expect(score.entryRanks == [nil, nil] && score.firstHit == nil)
        #expect(score.recall(at: 10) == 0 && score.reciprocalRank == 0 && score.ndcg == 0)
        #expect(RetrievalMetrics.score([], relevant: [Relevant(key: "a.txt")], k: 10).ndcg == 0)
    }

    /// A collapsed result stands for every copy it lists: it hits each copy's entry, and gains once.
    @Test func aCollapsedResultCreditsEveryCopyAndGainsOnce() {
        let relevant = [
            Relevant(key: "text/faq.txt", contains: "no recovery"),
            Relevant(key: "pdf/faq.pdf", page: 2, contains: "no recovery"),
            Relevant(key: "other.txt", contains: "elsewhere"),
        ]
        let collapsed = Self.result("text/faq.txt", "There is no recovery program", copies: [("pdf/faq.pdf", 2)])
        let score = RetrievalMetrics.score(
            [collapsed, Self.result("other.txt", "found elsewhere")],
            relevant: relevant,
            k: 10
        )
        #expect(score.entryRanks == [1, 1, 2])
        #expect(score.recall(at: 5) == 1)
        let ideal = 1 + 1 / log2(3.0) + 1 / log2(4.0)
        #expect(Self.close(score.ndcg, (1 + 1 / log2(3.0)) / ideal))
    }

    /// A second result hitting an entry already hit gains nothing (each entry counts once).
    @Test func duplicateHitsCountOnce() {
        let relevant = [Relevant(key: "a.txt", contains: "alpha"), Relevant(key: "b.txt")]
        let results = [
            Self.result("a.txt", "alpha one"), Self.result("a.txt", "alpha two"), Self.result("b.txt", "b"),
        ]
        let score = RetrievalMetrics.score(results, relevant: relevant, k: 10)
        #expect(score.entryRanks == [1, 3])
        #expect(Self.close(score.ndcg, (1 + 1 / log2(4.0)) / (1 + 1 / log2(3.0))))
    }

    @Test func theIdealHasAtMostKHits() {
        let relevant = (0..<12).map { Relevant(key: "d\($0).txt") }
        let results = (0..<12).map { Self.result("d\($0).txt", "t") }
        let score = RetrievalMetrics.score(results, relevant: relevant, k: 10)
        #expect(Self.close(score.ndcg, 1))
        #expect(score.recall(at: 10) == 10.0 / 12)
    }

    @Test func pagesMustMatchWhenTheEntryNamesOne() {
        let entry = Relevant(key: "a.pdf", page: 2)
        #expect(RetrievalMetrics.hits(Self.result("a.pdf", page: 2, "t"), [entry]) == [0])
        #expect(RetrievalMetrics.hits(Self.result("a.pdf", page: 3, "t"), [entry]).isEmpty)
        #expect(RetrievalMetrics.hits(Self.result("a.pdf", "t"), [entry]).isEmpty)
        // An entry without a page takes any page.
        #expect(RetrievalMetrics.hits(Self.result("a.pdf", page: 7, "t"), [Relevant(key: "a.pdf")]) == [0])
        #expect(RetrievalMetrics.hits(Self.result("b.pdf", page: 2, "t"), [entry]).isEmpty)
    }

    /// White space is compared as Python's `re.sub(r"\s+", " ", …).strip()` does; characters as code points.
    @Test func phrasesAreComparedWithWhiteSpaceSquashed() {
        let entry = Relevant(key: "a", contains: " many  threads\tcannot ")
        #expect(RetrievalMetrics.hits(Self.result("a", "then many\nthreads \u{A0} cannot be used"), [entry]) == [0])
        #expect(RetrievalMetrics.hits(Self.result("a", "many\u{1C}threads\u{2028}cannot"), [entry]) == [0])
        #expect(RetrievalMetrics.hits(Self.result("a", "many threadscannot"), [entry]).isEmpty)
        #expect(RetrievalMetrics.hits(Self.result("a", "many threads can not"), [entry]).isEmpty)
        // Precomposed é against e + combining acute: different code points, not a hit (as in Python).
        let accent = Relevant(key: "a", contains: "r\u{E9}sum\u{E9}")
        #expect(RetrievalMetrics.hits(Self.result("a", "naive re\u{301}sume\u{301}"), [accent]).isEmpty)
        #expect(RetrievalMetrics.hits(Self.result("a", "na\u{EF}ve r\u{E9}sum\u{E9}"), [accent]) == [0])
    }

    @Test func squashMatchesPython() {
        #expect(RetrievalMetrics.squash("  a \n\t b\r\n") == Array("a b".utf8))
        #expect(RetrievalMetrics.squash("\u{3000}x\u{85}y\u{1F}") == Array("x y".utf8))
        #expect(RetrievalMetrics.squash("").isEmpty && RetrievalMetrics.squash(" \n ").isEmpty)
        // Not white space for Python either: a zero-width space stays.
        #expect(RetrievalMetrics.squash("a\u{200B}b") == Array("a\u{200B}b".utf8))
    }
}
