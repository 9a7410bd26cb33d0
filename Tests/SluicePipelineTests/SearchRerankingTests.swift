import Foundation
import SluiceCore
import SluiceEmbed
import SluiceHTTP
import SluiceTesting
import Testing

@testable import SluicePipeline

/// The second stage of a search (`search.rerank`) against the rerank stand-in, which scores a passage by the
/// number of distinct query words it holds: the order it gives, its deadline, its failures, and a query
/// that skips it.
@Suite struct SearchRerankingTests {
    let embedder = CountingEmbedder()
    let sink = InMemorySink()
    static let key = "rk-search-\(UUID().uuidString)"
    static let query = "valve pressure relief"

    /// Passages with 0 to 3 of the query's words, none first by that count in the first stage's order.
    static let passages: [(key: String, text: String, words: Int)] = [
        ("gauge.md", "pressure gauges read the pressure of the line", 1),
        ("pump.md", "pumps move water through the pipes", 0),
        ("relief.md", "the relief valve opens when the pressure is too high", 3),
        ("map.md", "a relief map of the valley and its valve house", 2),
    ]

    private func store() async throws {
        try await sink.prepare(embedder: embedder.identity)
        let vectors = try await embedder.embed(Self.passages.map(\.text))
        try await sink.upsert(
            zip(Self.passages, vectors).enumerated().map { ordinal, pair in
                VectorRecord(
                    id: VectorID(rawValue: "\(pair.0.key)#0"),
                    documentKey: pair.0.key,
                    ordinal: ordinal,
                    text: pair.0.text,
                    vector: pair.1
                )
            }
        )
    }

    private func server(_ arguments: [String] = []) async throws -> StandInServer {
        try await StandInServer.launch(script: "rerank_standin.py", arguments: ["--api-key", Self.key] + arguments)
    }

    private func searcher(
        _ server: StandInServer,
        key: String = key,
        topN: Int = 50,
        deadline: Duration = .seconds(60)
    ) throws -> Searcher {
        var configuration = RemoteRerankerConfiguration(kind: .tei, url: server.baseURL + "/rerank", model: nil)
        configuration.apiKey = key
        configuration.maxRetries = 1
        configuration.backoffBase = .milliseconds(10)
        var searcher = Searcher(embedder: embedder, sink: sink)
        searcher.reranking = SearchReranking(
            reranker: try RemoteReranker(configuration: configuration),
            topN: topN,
            deadline: deadline
        )
        return searcher
    }

    private func stats(_ server: StandInServer) async throws -> [String: Int] {
        let response = try await HTTPClient.shared.send(HTTPRequest(url: server.baseURL + "/stats"))
        return try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Int])
    }

    @Test(arguments: [SearchMode.vector, .keyword])
    func reordersAsTheRerankerScoresKeepingTheFirstStageScore(mode: SearchMode) async throws {
        try await store()
        let server = try await server()
        let searcher = try searcher(server)
        let query = SearchQuery(text: Self.query, k: 3, mode: mode)
        let firstStage = try await searcher.search(SearchQuery(text: Self.query, k: 50, mode: mode))
        let outcome = try await searcher.searchOutcome(query)

        #expect(outcome.rerank == RerankStatus(model: "tei", applied: true))
        let expected = Self.passages.filter { passage in firstStage.contains { $0.documentKey == passage.key } }
            .sorted { $0.words > $1.words }.prefix(3)
        #expect(outcome.results.map(\.documentKey) == expected.map(\.key))
        #expect(outcome.results.map(\.rerankScore) == expected.map { Double($0.words) })
        for result in outcome.results {
            #expect(result.score == firstStage.first { $0.id == result.id }?.score, "the first stage's score is kept")
        }
        // The reranker was sent the first stage's candidates, once.
        let stats = try await stats(server)
        #expect(stats["requests"] == 1)
        #expect(stats["documents"] == firstStage.count)
    }

    @Test func reScoresOnlyTheFirstStagesTopN() async throws {
        try await store()
        let server = try await server()
        let outcome = try await searcher(server, topN: 2).searchOutcome(SearchQuery(text: Self.query, k: 1))
        #expect(outcome.results.count == 1)
        #expect(try await stats(server)["documents"] == 2)
        // k above top_n: k are re-scored.
        _ = try await searcher(server, topN: 2).searchOutcome(SearchQuery(text: Self.query, k: 4))
        #expect(try await stats(server)["documents"] == 2 + 4)
    }

    @Test func pastItsDeadlineTheFirstStagesOrderIsReturnedAndSaidSo() async throws {
        try await store()
        let server = try await server(["--delay-ms", "120000"])
        let searcher = try searcher(server, deadline: .milliseconds(300))
        let query = SearchQuery(text: Self.query, k: 3)
        let outcome = try await searcher.searchOutcome(query)
        let firstStage = try await searcher.search(query)

        #expect(outcome.rerank?.applied == false)
        #expect(outcome.rerank?.reason?.contains("search.rerank.deadline_seconds") == true, "\(outcome)")
        #expect(outcome.results.map(\.id) == firstStage.map(\.id))
        #expect(outcome.results.allSatisfy { $0.rerankScore == nil })
    }

    @Test func aRerankerThatFailsLeavesTheFirstStagesOrderWithoutItsKey() async throws {
        try await store()
        let server = try await server()
        let wrong = "rk-wrong-\(UUID().uuidString)"
        let query = SearchQuery(text: Self.query, k: 3)
        let outcome = try await searcher(server, key: wrong).searchOutcome(query)
        #expect(outcome.rerank?.applied == false)
        let reason = try #require(outcome.rerank?.reason)
        #expect(reason.contains("401"), "\(reason)")
        #expect(!reason.contains(wrong), "the key the server echoed is in the reason: \(reason)")
        #expect(
            outcome.results.map(\.id) == (try await Searcher(embedder: embedder, sink: sink).search(query)).map(\.id)
        )

        server.stop()
        let down = try await searcher(server).searchOutcome(query)
        #expect(down.rerank?.applied == false)
        #expect(down.rerank?.reason?.contains("the reranker failed") == true, "\(down)")
        #expect(down.results.count == 3)
    }

    @Test func aQueryCanSkipTheReranker() async throws {
        try await store()
        let server = try await server()
        var query = SearchQuery(text: Self.query, k: 3)
        query.rerank = false
        let outcome = try await searcher(server).searchOutcome(query)
        #expect(outcome.rerank?.applied == false)
        #expect(outcome.rerank?.reason?.contains("skipped") == true)
        #expect(outcome.results.allSatisfy { $0.rerankScore == nil })
        #expect(try await stats(server)["requests"] == 0)
    }

    @Test func aSearcherWithoutARerankerSaysNothingOfOne() async throws {
        try await store()
        let outcome = try await Searcher(embedder: embedder, sink: sink).searchOutcome(SearchQuery(text: Self.query))
        #expect(outcome.rerank == nil)
        #expect(!outcome.results.isEmpty)
    }

    @Test func thePipelineFileDescribesTheReranker() throws {
        #expect(try SearchReranking(configuration: PipelineConfiguration()) == nil)
        let configuration = try PipelineConfiguration.load(
            file: nil,
            overrides: [
                "search.rerank.kind=tei", "search.rerank.url=http://127.0.0.1:9/rerank", "search.rerank.top_n=20",
                "search.rerank.deadline_seconds=1.5", "search.rerank.api_key_env=SLUICE_TEST_RERANK_KEY",
            ]
        )
        let reranking = try #require(
            try SearchReranking(configuration: configuration, environment: ["SLUICE_TEST_RERANK_KEY": Self.key])
        )
        #expect(reranking.topN == 20)
        #expect(reranking.deadline == .milliseconds(1500))
        let remote = try #require(reranking.reranker as? RemoteReranker)
        #expect(remote.configuration.maxDocumentsPerRequest == 32)
        #expect(remote.configuration.apiKey == Self.key)
        // A named variable that is not set is the pipeline's mistake, and names the variable only.
        #expect {
            _ = try SearchReranking(configuration: configuration, environment: [:])
        } throws: { error in
            (error as? SluiceError)?.code == .configuration
                && (error as? SluiceError)?.message.contains("SLUICE_TEST_RERANK_KEY") == true
        }
        // Cohere and Jina need a model.
        #expect(throws: SluiceError.self) {
            _ = try PipelineConfiguration.load(
                file: nil,
                overrides: ["search.rerank.kind=jina", "search.rerank.url=https://api.jina.ai/v1/rerank"]
            )
        }
    }
}
