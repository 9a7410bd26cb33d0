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
