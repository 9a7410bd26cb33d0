import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluicePipeline

/// docs/DESIGN.md §10, search: arguments, the index's own embedder, filters pushed to the store, modes,
/// collapsed copies, the minimum score and snippets.
@Suite struct SearcherTests {
    let embedder = CountingEmbedder()
    let sink = InMemorySink()

    private func store(_ entries: [(key: String, text: String, metadata: [String: MetadataValue])]) async throws {
        try await sink.store(entries, embedder: embedder)
    }

    private var searcher: Searcher { Searcher(embedder: embedder, sink: sink) }

    @Test(arguments: [("", 5, "empty"), ("  \n", 5, "empty"), ("q", 0, "k must be"), ("q", 1001, "k must be")])
    func refusesBadArguments(text: String, k: Int, message: String) async throws {
        try await store([("a.txt", "alpha", [:])])
        await #expect {
            _ = try await searcher.search(SearchQuery(text: text, k: k))
        } throws: { error in
            (error as? SluiceError)?.code == .usage && (error as? SluiceError)?.message.contains(message) == true
        }
    }

    @Test func refusesAnIndexBuiltByAnotherEmbedder() async throws {
        let other = CountingEmbedder(dimensions: 8)
        let foreign = InMemorySink()
        try await foreign.prepare(embedder: EmbedderIdentity(provider: "openai", model: "x", dimensions: 8))
        try await foreign.upsert([
            VectorRecord(
                id: VectorID(rawValue: "a"),
                documentKey: "a",
                ordinal: 0,
                text: "t",
                vector: [1, 0, 0, 0, 0, 0, 0, 0]
            )
        ])
        await #expect {
            _ = try await Searcher(embedder: other, sink: foreign).search(SearchQuery(text: "t", mode: .vector))
        } throws: { ($0 as? SluiceError)?.code == .embedderMismatch }
    }

    @Test func copiesCollapseIntoOneResultListingEveryDocument() async throws {
        try await store([
            ("a.txt", "the licence text", [:]), ("b.txt", "the licence text", ["page": 2]),
            ("c.txt", "  the   licence\ntext ", [:]), ("d.txt", "something else entirely", [:]),
        ])
        let results = try await searcher.search(SearchQuery(text: "licence text", k: 2, mode: .vector))
        #expect(results.count == 2)
        let top = try #require(results.first)
        #expect(top.text.contains("licence"))
        #expect(Set([top.documentKey] + top.duplicates.map(\.documentKey)) == ["a.txt", "b.txt", "c.txt"])
        #expect(results[1].documentKey == "d.txt")
        let all = try await searcher.search(
            SearchQuery(text: "licence text", k: 4, mode: .vector, collapseDuplicates: false)
        )
        #expect(all.count == 4 && all.allSatisfy(\.duplicates.isEmpty))
    }

    @Test func theFilterReachesTheStoreAndKResultsComeBack() async throws {
        try await store((0..<40).map { ("doc\($0).txt", "passage number \($0) about rivers", ["page": .int($0)]) })
        let results = try await searcher.search(
            SearchQuery(text: "rivers", k: 5, filter: try SearchFilter(parsing: "page >= 30"), mode: .vector)
        )
        #expect(results.count == 5)
        #expect(results.allSatisfy { ($0.page ?? 0) >= 30 })
    }

    @Test func hybridFindsTheExactTermAndMinScoreJudgesSimilarity() async throws {
        try await store(
            (0..<30).map { ("doc\($0).txt", "general text about payments number \($0)", [:]) }
                + [("rates.json", "currency code XOF rate 655.957", [:])]
        )
        #expect(searcher.defaultMode == .hybrid)
        let keyword = try await searcher.search(SearchQuery(text: "XOF", k: 3, mode: .keyword))
        #expect(keyword.first?.documentKey == "rates.json")
        let hybrid = try await searcher.search(SearchQuery(text: "XOF", k: 3))
        #expect(hybrid.contains { $0.documentKey == "rates.json" })
        #expect(hybrid.allSatisfy { $0.vectorScore != nil })
        let strict = try await searcher.search(SearchQuery(text: "XOF", k: 30, mode: .vector, minScore: 0.999))
        #expect(strict.allSatisfy { ($0.vectorScore ?? 0) >= 0.999 })
        #expect(strict.count < 30)
    }

    @Test func snippetsHoldTheQueryWords() {
        let text =
            String(repeating: "filler words that say nothing. ", count: 20) + "The checkpoint resumes a run. "
            + String(repeating: "more filler text. ", count: 20)
        let snippet = Snippet.make(text: text, query: "how does a checkpoint resume", length: 120)
        #expect(snippet.contains("checkpoint"))
        #expect(snippet.count <= 124)
        #expect(snippet.hasPrefix("…") && snippet.hasSuffix("…"))
        #expect(Snippet.make(text: "short  text\n", query: "x") == "short text")
    }

    @Test("hybrid fuses by the query's rule, else the searcher's; the rare term is first with score fusion")
    func fusionRules() async throws {
        try await store(
            (0..<30).map { ("doc\($0).txt", "general text about payments number \($0)", [:]) }
                + [("rates.json", "currency code XOF rate 655.957", [:])]
        )
        var searcher = Searcher(embedder: embedder, sink: sink)
        #expect(searcher.fusion == .score())
        let scored = try await searcher.search(SearchQuery(text: "XOF payments", k: 5))
        #expect(scored.first?.documentKey == "rates.json")
        #expect(scored.allSatisfy { (0...1).contains($0.score) })
        let ranked = try await searcher.search(SearchQuery(text: "XOF payments", k: 5, fusion: .rrf(k: 10)))
        #expect(ranked.allSatisfy { $0.score <= 2.0 / 11 })
        searcher.fusion = .rrf(k: 10)
        #expect(try await searcher.search(SearchQuery(text: "XOF payments", k: 5)) == ranked)
        await #expect(throws: SluiceError.self) {
            try await searcher.search(SearchQuery(text: "XOF", k: 5, fusion: .score(vectorWeight: 1.5)))
        }
    }

    @Test func reciprocalRankFusionRewardsAgreement() {
        func hit(_ id: String) -> SearchHit {
            SearchHit(
                score: 0,
                record: VectorRecord(id: VectorID(rawValue: id), documentKey: id, ordinal: 0, text: id, vector: [])
            )
        }
        let fused = ReciprocalRankFusion().fuse([[hit("a"), hit("b"), hit("c")], [hit("c"), hit("b"), hit("d")]])
        #expect(fused.map(\.record.id.rawValue) == ["c", "b", "a", "d"])
    }
}
