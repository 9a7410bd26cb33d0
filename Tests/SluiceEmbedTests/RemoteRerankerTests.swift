import Foundation
import SluiceCore
import SluiceHTTP
import SluiceTesting
import Testing

@testable import SluiceEmbed

/// The remote reranker against the rerank stand-in (Sources/SluiceTesting/StandIns/rerank_standin.py), which
/// scores a document by the number of distinct query words it holds and enforces the APIs' limits.
@Suite struct RemoteRerankerTests {
    static let key = "rk-test-\(UUID().uuidString)"
    typealias Kind = PipelineConfiguration.Search.Rerank.Kind

    static func server(_ arguments: [String] = []) async throws -> StandInServer {
        try await StandInServer.launch(script: "rerank_standin.py", arguments: ["--api-key", key] + arguments)
    }

    static func reranker(
        _ server: StandInServer,
        kind: Kind = .cohere,
        key: String? = key,
        configure: (inout RemoteRerankerConfiguration) -> Void = { _ in }
    ) throws -> RemoteReranker {
        var configuration = RemoteRerankerConfiguration(
            kind: kind,
            url: server.baseURL + (kind.shape == .tei ? "/rerank" : "/v2/rerank"),
            model: kind.requiresModel ? "rerank-test" : nil
        )
        configuration.apiKey = key
        configuration.backoffBase = .milliseconds(10)
        configuration.backoffCap = .milliseconds(50)
        configure(&configuration)
        return try RemoteReranker(configuration: configuration)
    }

    static func stats(_ server: StandInServer) async throws -> [String: Int] {
        let response = try await HTTPClient.shared.send(HTTPRequest(url: server.baseURL + "/stats"))
        return try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Int])
    }

    static func control(_ server: StandInServer, _ changes: [String: Any]) async throws {
        let body = try JSONSerialization.data(withJSONObject: changes)
        _ = try await HTTPClient.shared.send(.postJSON(server.baseURL + "/control", body: Array(body)))
    }

    static let documents = [
        "pumps and valves",  // 0: "valves" is not "valve"
        "the relief valve opens at a set pressure",  // valve, pressure, relief: 3
        "pressure gauges",  // pressure: 1
        "nothing related here",  // 0
        "a relief map",  // relief: 1
    ]
    static let query = "valve pressure relief"
    static let expected: [Double] = [0, 3, 1, 0, 1]

    @Test(arguments: [Kind.cohere, .tei, .jina, .vllm])
    func scoresByTheServersRuleInTheDocumentsOrder(kind: Kind) async throws {
        let server = try await Self.server(kind.requiresModel ? ["--require-model"] : [])
        let scores = try await Self.reranker(server, kind: kind).scores(query: Self.query, documents: Self.documents)
        #expect(scores == Self.expected)
    }

    @Test func sendsAtMostMaxDocumentsPerRequest() async throws {
        let server = try await Self.server(["--max-documents", "2"])
        let reranker = try Self.reranker(server) { $0.maxDocumentsPerRequest = 2 }
        let scores = try await reranker.scores(query: Self.query, documents: Self.documents)
        #expect(scores == Self.expected)
        let stats = try await Self.stats(server)
        #expect(stats["requests"] == 3)
        #expect(stats["too_large"] == 0)
        #expect(stats["max_documents_seen"] == 2)
    }

    @Test(arguments: [Kind.cohere, .tei])
    func aBatchTheServerRefusesAsTooLargeIsSplit(kind: Kind) async throws {
        // The server takes 2 (TEI: 413 "batch size", Cohere's shape: 400 "too many documents"); we think 5.
        let server = try await Self.server(["--max-documents", "2"])
        let reranker = try Self.reranker(server, kind: kind) { $0.maxDocumentsPerRequest = 5 }
        let scores = try await reranker.scores(query: Self.query, documents: Self.documents)
        #expect(scores == Self.expected)
        let stats = try await Self.stats(server)
        #expect((stats["too_large"] ?? 0) >= 1)
        #expect(reranker.requestStats.splits >= 1)
    }

    @Test func documentsAreCutToMaxDocumentCharacters() async throws {
        let server = try await Self.server(["--max-document-chars", "40"])
        let long = "relief " + String(repeating: "x", count: 400) + " valve pressure"
        let reranker = try Self.reranker(server) { $0.maxDocumentCharacters = 40 }
        // Cut to its first 40 characters, the document keeps only "relief".
        let scores = try await reranker.scores(query: Self.query, documents: [long, Self.documents[1]])
        #expect(scores == [1, 3])
        let stats = try await Self.stats(server)
        #expect(stats["max_document_chars_seen"] == 40)
        #expect(stats["too_large"] == 0)
    }

    @Test(arguments: [Kind.cohere, .tei])
    func retriesA429AfterItsRetryAfter(kind: Kind) async throws {
        let server = try await Self.server()
        try await Self.control(server, ["rate_limit_count": 1, "retry_after": "0"])
        let reranker = try Self.reranker(server, kind: kind)
        let scores = try await reranker.scores(query: Self.query, documents: Self.documents)
        #expect(scores == Self.expected)
        let stats = try await Self.stats(server)
        #expect(stats["rate_limited"] == 1)
        #expect(stats["ok"] == 1)
        #expect(reranker.requestStats.rateLimited == 1)
    }

    @Test func retriesA5xxThenGivesUpAsUnavailable() async throws {
        let server = try await Self.server()
        try await Self.control(server, ["fail_count": 1, "fail_status": 503])
        let reranker = try Self.reranker(server) { $0.maxRetries = 1 }
        #expect(try await reranker.scores(query: Self.query, documents: Self.documents) == Self.expected)

        try await Self.control(server, ["fail_count": 5, "fail_status": 502])
        await #expect {
            _ = try await reranker.scores(query: Self.query, documents: Self.documents)
        } throws: { error in
            guard let error = error as? SluiceError else { return false }
            return error.code == .dependencyUnavailable && error.message.contains("502")
        }
    }

    @Test func aRefusedKeyIsProviderRefusedAndNeverInTheMessage() async throws {
        let server = try await Self.server()
        let wrong = "rk-wrong-\(UUID().uuidString)"
        let reranker = try Self.reranker(server, key: wrong)
        var message = ""
        await #expect {
            _ = try await reranker.scores(query: Self.query, documents: Self.documents)
        } throws: { error in
            guard let error = error as? SluiceError else { return false }
            message = "\(error) \(error.message) \(error.description)"
            return error.code == .providerRefused
        }
        #expect(message.contains("401"))
        #expect(!message.contains(wrong), "the key the server echoed is in the error: \(message)")
        #expect(!"\(reranker.configuration)".contains(wrong))
        // Refused once, refused at once after: no second request.
        await #expect(throws: SluiceError.self) { _ = try await reranker.scores(query: "q", documents: ["d"]) }
        #expect(try await Self.stats(server)["unauthorized"] == 1)
    }

    @Test func aServerThatCannotBeReachedIsUnavailable() async throws {
        let server = try await Self.server()
        let reranker = try Self.reranker(server) { $0.maxRetries = 1 }
        server.stop()
        await #expect {
            _ = try await reranker.scores(query: Self.query, documents: Self.documents)
        } throws: { ($0 as? SluiceError)?.isUnavailability == true }
    }
}
