import Foundation
import SluiceCore
import SluiceHTTP
import SluiceTesting
import Testing

@testable import SluiceEmbed

/// The remote embedder against the OpenAI-compatible stand-in (Sources/SluiceTesting/StandIns/openai_standin.py).
@Suite struct RemoteEmbedderTests {
    static let key = "sk-test-\(UUID().uuidString)"

    static func texts(_ count: Int, prefix: String = "text") -> [String] {
        (0..<count).map { "\(prefix) number \($0): the quick brown fox jumps over the lazy dog \($0 * 7919)" }
    }

    static func embedder(
        _ server: StandInServer,
        provider: String = "openai",
        path: String = "/v1",
        key: String? = key,
        configure: (inout RemoteEmbedderConfiguration) -> Void = { _ in }
    ) throws -> RemoteEmbedder {
        var configuration = RemoteEmbedderConfiguration(
            provider: provider,
            baseURL: server.baseURL + path,
            model: "text-embedding-3-small",
            dimensions: 32
        )
        configuration.requestedDimensions = 32
        configuration.apiKey = key
        configuration.backoffBase = .milliseconds(20)
        configuration.backoffCap = .milliseconds(200)
        configuration.maxConcurrency = 4
        configure(&configuration)
        return try RemoteEmbedder(configuration: configuration)
    }

    static func stats(_ server: StandInServer) async throws -> [String: Int] {
        let response = try await HTTPClient.shared.send(HTTPRequest(url: server.baseURL + "/stats"))
        let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Int]
        return try #require(object)
    }

    /// The vectors of texts embedded one by one: the reference for batches (placement by index).
    static func singly(_ embedder: RemoteEmbedder, _ texts: [String]) async throws -> [[Float]] {
        var out: [[Float]] = []
        for text in texts { out += try await embedder.embed([text]) }
        return out
    }

    @Test func openAIBase64ResultsArePlacedByIndex() async throws {
        let server = try await StandInServer.launch(
            script: "openai_standin.py",
            arguments: ["--api-key", Self.key, "--shuffle", "1"]
        )
        let embedder = try Self.embedder(server)
        let texts = Self.texts(20)
        let vectors = try await embedder.embed(texts)
        #expect(vectors.count == 20)
        #expect(vectors.allSatisfy { $0.count == 32 })
        #expect(vectors == (try await Self.singly(embedder, texts)))
        let floats = try Self.embedder(server) { $0.encodingFormat = "float" }
        let viaFloats = try await floats.embed(texts)
        for (a, b) in zip(vectors, viaFloats) {
            #expect(zip(a, b).allSatisfy { abs($0 - $1) < 1e-6 })
        }
    }

    @Test(arguments: [("azure-openai", "/openai/deployments/emb"), ("ollama", ""), ("tei", "")])
    func otherDialects(provider: String, path: String) async throws {
        let server = try await StandInServer.launch(
            script: "openai_standin.py",
            arguments: ["--api-key", Self.key, "--dims", "32"]
        )
        let embedder = try Self.embedder(server, provider: provider, path: path) { $0.requestedDimensions = nil }
        let texts = Self.texts(9)
        let vectors = try await embedder.embed(texts)
        #expect(vectors.count == 9)
        #expect(vectors.allSatisfy { $0.count == 32 })
        #expect(vectors == (try await Self.singly(embedder, texts)))
    }

    @Test(arguments: [("openai", "/v1"), ("tei", "")])
    func tooLargeBatchesAreSplit(provider: String, path: String) async throws {
        let server = try await StandInServer.launch(
            script: "openai_standin.py",
            arguments: ["--max-inputs", "5", "--dims", "32"]
        )
        let embedder = try Self.embedder(server, provider: provider, path: path, key: nil) {
            $0.requestedDimensions = nil
        }
        let texts = Self.texts(23)
        let vectors = try await embedder.embed(texts)
        #expect(vectors == (try await Self.singly(embedder, texts)))
        #expect((embedder.requestStats?.splits ?? 0) >= 3)
        #expect(try await Self.stats(server)["too_large"] ?? 0 >= 1)
    }

    @Test func tokenLimitPerRequestSplitsBeforeSending() async throws {
        let server = try await StandInServer.launch(
            script: "openai_standin.py",
            arguments: ["--max-request-tokens", "100"]
        )
        let embedder = try Self.embedder(server) { $0.limits.maxTokensPerRequest = 100 }
        let vectors = try await embedder.embed(Self.texts(12))
        #expect(vectors.count == 12)
        #expect(try await Self.stats(server)["too_large"] == 0, "the client splits by its own token count first")
    }

    /// Session 47's campaign: `search`, `eval` and the promote gate exited 70 (a bug) when a remote
    /// embedder could not be reached, where a run exits 6.
    @Test func anEmbedderThatCannotBeReachedIsAnUnavailability() async throws {
        var configuration = RemoteEmbedderConfiguration(
            provider: "openai",
            baseURL: "http://127.0.0.1:9/v1",
            model: "text-embedding-3-small",
            dimensions: 32
        )
        configuration.maxRetries = 1
        configuration.backoffBase = .milliseconds(10)
        configuration.backoffCap = .milliseconds(20)
        let embedder = try RemoteEmbedder(configuration: configuration)
        let error = try await #require(throws: SluiceError.self) { try await embedder.embed(["a query"]) }
        #expect(error.code == .embeddingFailed)
        #expect(error.isUnavailability)
        #expect(RunExitCode(for: error) == .dependencyUnavailable)
    }

    @Test func transientFailuresAreRetried() async throws {
        let server = try await StandInServer.launch(
            script: "openai_standin.py",
            arguments: ["--error-rate", "0.3", "--reset-rate", "0.15", "--seed", "7"]
        )
        let embedder = try Self.embedder(server, key: nil) { $0.maxRetries = 12 }
        let texts = Self.texts(40)
        var vectors: [[Float]] = []
        for start in stride(from: 0, to: 40, by: 4) {
            vectors += try await embedder.embed(Array(texts[start..<(start + 4)]))
        }
        #expect(vectors.count == 40)
        let stats = try await Self.stats(server)
        #expect((stats["server_errors"] ?? 0) + (stats["resets"] ?? 0) > 0)
        // Every 5xx is seen and retried here; libcurl itself re-sends on a reused connection that was reset
        // before any answer, so resets count on the server, not always here.
        #expect(embedder.requestStats?.retries ?? 0 >= (stats["server_errors"] ?? 0))
        #expect(stats["ok"] == 10)
    }

    @Test func slowAnswersTimeOutAndAreRetried() async throws {
        let server = try await StandInServer.launch(
            script: "openai_standin.py",
            arguments: ["--slow-rate", "0.5", "--slow-ms", "2000", "--seed", "3"]
        )
        let embedder = try Self.embedder(server, key: nil) {
            $0.http.timeout = .milliseconds(400)
            $0.maxRetries = 12
        }
        let vectors = try await embedder.embed(Self.texts(6))
        #expect(vectors.count == 6)
    }

    @Test func retriesRunOutWithTheReason() async throws {
        let server = try await StandInServer.launch(script: "openai_standin.py", arguments: ["--error-rate", "1.0"])
        let embedder = try Self.embedder(server, key: nil) { $0.maxRetries = 2 }
        let error = await #expect(throws: SluiceError.self) { try await embedder.embed(Self.texts(3)) }
        #expect(error?.code == .embeddingFailed)
        #expect(error?.message.contains("gave up after 3 attempts") == true)
        #expect(try await Self.stats(server)["requests"] == 3)
    }

    @Test func rateLimitStormsAreWaitedOut() async throws {
        let server = try await StandInServer.launch(script: "openai_standin.py", arguments: ["--storm", "6"])
        let embedder = try Self.embedder(server, key: nil)
        let vectors = try await embedder.embed(Self.texts(5))
        #expect(vectors.count == 5)
        #expect(embedder.requestStats?.rateLimited == 6)
    }

    @Test func aFullTEIQueueIsWaitedOutAndLowersConcurrency() async throws {
        // TEI answers 429 when more than one request is active.
        let server = try await StandInServer.launch(
            script: "openai_standin.py",
            arguments: ["--tei-queue", "1", "--dims", "32", "--latency-ms", "100"]
        )
        let embedder = try Self.embedder(server, provider: "tei", path: "", key: nil) {
            $0.requestedDimensions = nil
            $0.maxConcurrency = 4
        }
        let counts = try await withThrowingTaskGroup(of: Int.self) { group in
            for batch in 0..<8 {
                group.addTask { try await embedder.embed(Self.texts(3, prefix: "batch \(batch)")).count }
            }
            return try await group.reduce(0, +)
        }
        #expect(counts == 24)
        #expect((embedder.requestStats?.rateLimited ?? 0) > 0)
    }

    @Test func quotaExhaustionRefusesAndStopsSending() async throws {
        let server = try await StandInServer.launch(
            script: "openai_standin.py",
            arguments: ["--api-key", Self.key, "--quota-after", "2"]
        )
        let embedder = try Self.embedder(server)
        _ = try await embedder.embed(Self.texts(2))
        _ = try await embedder.embed(Self.texts(2, prefix: "b"))
        let error = await #expect(throws: SluiceError.self) { try await embedder.embed(Self.texts(2, prefix: "c")) }
        #expect(error?.code == .providerRefused)
        #expect(error?.message.contains("insufficient_quota") == true)
        let requests = try await Self.stats(server)["requests"]
        let again = await #expect(throws: SluiceError.self) { try await embedder.embed(Self.texts(2, prefix: "d")) }
        #expect(again?.code == .providerRefused)
        #expect(try await Self.stats(server)["requests"] == requests, "a refused embedder sends nothing more")
    }

    @Test func rejectedKeyIsRefusedWithoutShowingTheKey() async throws {
        let server = try await StandInServer.launch(
            script: "openai_standin.py",
            arguments: ["--api-key", "sk-the-right-one"]
        )
        let embedder = try Self.embedder(server)
        let error = await #expect(throws: SluiceError.self) { try await embedder.embed(Self.texts(1)) }
        #expect(error?.code == .providerRefused)
        #expect(error.map { "\($0) \($0.detailedDescription())".contains(Self.key) } == false)
        #expect(!String(describing: embedder.configuration).contains(Self.key))
    }

    @Test func scrubRemovesKeysAndKeyFragments() throws {
        let server = try StandInServer(script: "openai_standin.py")
        let embedder = try Self.embedder(server)
        let scrubbed = embedder.scrub("Incorrect API key provided: \(Self.key) and sk-ab***yz.")
        #expect(!scrubbed.contains(Self.key))
        #expect(!scrubbed.contains("sk-ab"))
    }

    @Test func ollamaRefusesToTruncate() async throws {
        // The stand-in answers 400 to an input over its context, as Ollama does with truncate=false.
        let server = try await StandInServer.launch(
            script: "openai_standin.py",
            arguments: ["--max-input-tokens", "10"]
        )
        let embedder = try Self.embedder(server, provider: "ollama", path: "", key: nil) {
            $0.requestedDimensions = nil
        }
        let error = await #expect(throws: SluiceError.self) {
            try await embedder.embed([
                "a long input that is certainly more than ten tokens once it is tokenized by anything"
            ])
        }
        #expect(error?.code == .embeddingFailed)
    }
}
