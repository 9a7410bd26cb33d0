import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluicePipeline

/// `sluice eval`'s library side: each configuration searched through the Searcher, the report's means per
/// kind, its misses, its table and JSON.
@Suite struct RetrievalEvaluationTests {
    let embedder = CountingEmbedder()
    let sink = InMemorySink()

    private func store(_ entries: [(key: String, text: String)]) async throws {
        try await sink.store(entries.map { ($0.key, $0.text, [:]) }, embedder: embedder)
    }

    static let queries = [
        JudgedQuery(id: "q1", query: "XOF rate", kind: "exact", relevant: [.init(key: "rates.json", contains: "XOF")]),
        JudgedQuery(
            id: "q2",
            query: "green gates spring",
            kind: "natural",
            relevant: [.init(key: "gates.txt"), .init(key: "copy.txt")]
        ),
        JudgedQuery(id: "q3", query: "zebra", kind: "natural", relevant: [.init(key: "none.txt")]),
    ]

    @Test func scoresEachConfigurationThroughTheSearcher() async throws {
        try await store([
            ("rates.json", "currency XOF rate 655.957"), ("gates.txt", "gates are painted green every spring"),
            ("copy.txt", "gates are painted green every spring"), ("weather.md", "rain in the afternoon"),
        ])
        let evaluation = RetrievalEvaluation(searcher: Searcher(embedder: embedder, sink: sink), k: 3)
        var calls = 0
        let report = try await evaluation.evaluate(
            Self.queries,
            configurations: [.mode(.keyword), .mode(.hybrid)],
            progress: { _, _ in calls += 1 }
        )
        #expect(calls == 6)
        #expect(report.configurations.map(\.configuration.name) == ["keyword", "hybrid"])
        #expect(report.cutoffs == [3])
        let keyword = report.configurations[0]
        // The copies collapse into one result that credits both documents.
        #expect(keyword.scores[1].entryRanks == [1, 1])
        #expect(keyword.scores[0].entryRanks == [1])
        #expect(keyword.scores[2].entryRanks == [nil])
        let all = try #require(report.summary(keyword, kind: "all"))
        #expect(all.queries == 3 && all.recall == [2.0 / 3])
        let natural = try #require(report.summary(keyword, kind: "natural"))
        #expect(natural.queries == 2 && natural.meanReciprocalRank == 0.5)
        #expect(report.summary(keyword, kind: "pdf-page") == nil)
        #expect(report.misses(keyword).map(\.query.id) == ["q3"])
        #expect(report.kinds == ["all", "exact", "natural"])
    }

    @Test func theTableAndTheJSON() async throws {
        try await store([("rates.json", "currency XOF rate"), ("gates.txt", "gates painted green in spring")])
        let evaluation = RetrievalEvaluation(searcher: Searcher(embedder: embedder, sink: sink), k: 10)
        let report = try await evaluation.evaluate(Self.queries, configurations: [.mode(.keyword)])
        let table = report.table(misses: true)
        #expect(table.contains("recall@5 recall@10       MRR   nDCG@10"))
        #expect(table.contains("keyword       all                3"))
        #expect(table.contains("keyword: 2 of 3 queries with an answer not in the top 10"))
        #expect(table.contains("q2 [natural] green gates spring — found 1 of 2, first at rank 1"))
        #expect(table.contains("      missed copy.txt\n"))
        #expect(table.contains("q3 [natural] zebra — nothing found"))
        #expect(!report.table(misses: false).contains("missed"))
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(report.json().utf8)) as? [String: Any]
        )
        #expect(object["k"] as? Int == 10 && object["queries"] as? Int == 3)
        let configuration = try #require((object["configurations"] as? [[String: Any]])?.first)
        #expect(configuration["name"] as? String == "keyword" && configuration["mode"] as? String == "keyword")
        let scores = try #require(configuration["scores"] as? [String: [String: Any]])
        #expect(Set(scores.keys) == ["all", "exact", "natural"])
        #expect(Set(scores["all"]!.keys) == ["queries", "recall@5", "recall@10", "mrr@10", "ndcg@10"])
        let misses = try #require(configuration["misses"] as? [[String: Any]])
        #expect(misses.map { $0["id"] as? String } == ["q2", "q3"])
        #expect(misses[1]["first_hit"] is NSNull)
        #expect((misses[0]["found"] as? [[String: Any]])?.first?["rank"] as? Int == 1)
        #expect((misses[0]["missed"] as? [[String: Any]])?.first?["key"] as? String == "copy.txt")
    }

    @Test(arguments: [0, 1001])
    func aCutoffOutOfRangeIsAUsageError(k: Int) async throws {
        try await store([("a.txt", "alpha")])
        await #expect {
            _ = try await RetrievalEvaluation(searcher: Searcher(embedder: embedder, sink: sink), k: k).evaluate(
                Self.queries,
                configurations: [.mode(.keyword)]
            )
        } throws: { ($0 as? SluiceError)?.code == .usage }
    }
}

/// A reranker that scores a passage by how often the query's words occur in it, repeats counted (the
/// in-memory store's keyword ranking counts distinct words), and fails on a query holding `fail`: one
/// failure among answers, as a reranker past its deadline for one query.
private struct RepeatCountReranker: Reranker {
    var model: String { "words" }

    func scores(query: String, documents: [String]) async throws -> [Double] {
        let words = Set(query.lowercased().split(separator: " "))
        if words.contains("fail") { throw SluiceError(.dependencyUnavailable, "the reranker is down") }
        return documents.map { document in
            Double(document.lowercased().split(separator: " ").count { words.contains($0) })
        }
    }
}

@Suite struct RetrievalEvaluationRerankTests {
    let embedder = CountingEmbedder()
    let sink = InMemorySink()

    static let queries = [
        // Keyword (distinct words) ranks the passage with two of the words first, the repeated word fourth
        // (ties by id); the reranker, counting repeats, the repeated word first.
        JudgedQuery(id: "r1", query: "valve pressure relief", kind: "natural", relevant: [.init(key: "valve.txt")]),
        JudgedQuery(id: "r2", query: "valve pressure fail", kind: "natural", relevant: [.init(key: "valve.txt")]),
    ]

    @Test func eachQuerySaysWhetherTheRerankerOrderedIt() async throws {
        try await sink.store(
            [
                ("valve.txt", "valve valve valve valve valve valve", [:]),
                ("relief.txt", "the pressure relief line", [:]),
                ("gauge.txt", "a pressure gauge", [:]), ("map.txt", "a relief map", [:]),
            ],
            embedder: embedder
        )
        var searcher = Searcher(embedder: embedder, sink: sink)
        searcher.reranking = SearchReranking(reranker: RepeatCountReranker())
        let report = try await RetrievalEvaluation(searcher: searcher, k: 10).evaluate(
            Self.queries,
            configurations: try RetrievalEvaluation.configurations(modes: [.keyword], rerank: .both)
        )
        let (first, reranked) = (report.configurations[0], report.configurations[1])
        #expect(first.configuration.name == "keyword" && reranked.configuration.name == "keyword+rerank")
        #expect(first.rerank == [nil, nil] && first.rerankModel == nil)
        #expect(first.scores[0].firstHit == 4, "keyword: the passage with more distinct words first")
        #expect(reranked.scores[0].firstHit == 1, "the reranker: the repeated word first")
        // r2: the reranker failed; its results are the first stage's, and the report says so.
        #expect(reranked.rerank.map { $0?.applied } == [true, false])
        #expect(reranked.scores[1] == first.scores[1])
        #expect(report.notReranked(reranked).map(\.query.id) == ["r2"])
        #expect(report.notReranked(first).isEmpty)

        let table = report.table(misses: false)
        #expect(
            table.contains(
                "keyword+rerank: not reranked by words on 1 of 2 queries (scored in the first stage's order):\n"
            )
        )
        #expect(table.contains("  r2 [natural] valve pressure fail — the reranker failed: the reranker is down"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(report.json().utf8)) as? [String: Any])
        let configurations = try #require(object["configurations"] as? [[String: Any]])
        #expect(configurations[0]["rerank"] == nil)
        let rerank = try #require(configurations[1]["rerank"] as? [String: Any])
        #expect(rerank["model"] as? String == "words" && rerank["reranked"] as? Int == 1)
        let skipped = try #require(rerank["not_reranked"] as? [[String: Any]])
        #expect(skipped.map { $0["id"] as? String } == ["r2"])
        #expect((skipped.first?["reason"] as? String)?.contains("first-stage order") == true)
    }

    @Test func aRerankedConfigurationNeedsAReranker() async throws {
        try await sink.store([("a.txt", "valve", [:])], embedder: embedder)
        await #expect {
            _ = try await RetrievalEvaluation(searcher: Searcher(embedder: embedder, sink: sink)).evaluate(
                Self.queries,
                configurations: try RetrievalEvaluation.configurations(modes: [.keyword], rerank: .reranked)
            )
        } throws: { ($0 as? SluiceError)?.code == .usage }
    }

    @Test func hybridReportsTheSearchersFusion() async throws {
        try await sink.store([("relief.txt", "the pressure relief line", [:])], embedder: embedder)
        var searcher = Searcher(embedder: embedder, sink: sink)
        searcher.fusion = .rrf(k: 7)
        let report = try await RetrievalEvaluation(searcher: searcher).evaluate(
            Self.queries,
            configurations: [.mode(.hybrid), .mode(.keyword)]
        )
        #expect(report.configurations.map(\.configuration.options.fusion) == [.rrf(k: 7), nil])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(report.json().utf8)) as? [String: Any])
        let configurations = try #require(object["configurations"] as? [[String: Any]])
        #expect(configurations.map { $0["fusion"] as? String } == ["rrf", nil])
    }
}
