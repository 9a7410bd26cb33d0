import Foundation
import SluiceCore
import SluiceHTTP
import SluiceTesting
import Testing

@testable import SluicePipeline

/// The chat client against the stand-in: streaming, retries before the first token only, refusals, and
/// the key kept out of every message.
@Suite struct ChatClientTests {
    static let prompt = AnswerPrompt(
        question: "What is said?",
        hits: [AnswerPromptTests.hit("a.md", 0.9, "Something is said.")],
        maxContextTokens: 100,
        counter: AnswerPromptTests.tokenizer
    )

    /// The text and summary of one answer, or the error that ended it (with the text shown before).
    struct Result {
        var text = ""
        var summary: ChatClient.Summary?
        var error: (any Error)?
        var code: SluiceError.Code? { (error as? SluiceError)?.code }
        var message: String { (error as? SluiceError)?.description ?? error.map { "\($0)" } ?? "" }
    }

    static func ask(_ client: ChatClient) async -> Result {
        var result = Result()
        do {
            result.summary = try await client.complete(prompt) { result.text += $0 }
        } catch {
            result.error = error
        }
        return result
    }

    @Test func theAnswerStreamsWithModelAndUsage() async throws {
        let chat = try await ChatStandIn(["--crlf", "1", "--piece", "3"])
        let result = await Self.ask(try chat.client(chat.configuration()))
        #expect(result.error == nil, "\(result.message)")
        #expect(result.text == "The passages say so [1].")
        #expect(result.summary?.model == "test-model")
        #expect((result.summary?.usage?.completionTokens ?? 0) > 0)
        let last = try #require(try await chat.stats()["last"] as? [String: Any])
        #expect(last["passages"] as? Int == 1)
        #expect(last["question"] as? String == "What is said?")
        #expect(last["include_usage"] as? Bool == true)
    }

    @Test(arguments: [
        ["--status-first", "2", "--status", "429", "--retry-after", "0"],
        ["--status-first", "2", "--status", "500"],
        ["--status-first", "1", "--status", "503"],
        ["--reset-first", "2"],
        ["--empty-first", "1"],
    ])
    func failuresBeforeTheFirstTokenAreRetried(fault: [String]) async throws {
        let chat = try await ChatStandIn(fault)
        let result = await Self.ask(try chat.client(chat.configuration()))
        #expect(result.error == nil, "\(result.message)")
        #expect(result.text == "The passages say so [1].")
        let stats = try await chat.stats()
        #expect(stats["answered"] as? Int == 1)
        #expect((stats["requests"] as? Int ?? 0) == 1 + (stats["faults"] as? Int ?? -1))
    }

    @Test func aFailureAfterTheFirstTokenEndsTheAnswerWithoutARetry() async throws {
        let chat = try await ChatStandIn(["--error-after", "2"])
        let result = await Self.ask(try chat.client(chat.configuration()))
        #expect(result.code == .dependencyUnavailable)
        #expect(result.message.contains("overloaded"))
        #expect(result.text == "The pass")
        #expect(try await chat.requests() == 1)
    }

    /// A stream that ends cleanly after some text but before a finish reason or `[DONE]` is a cut answer,
    /// not a complete one.
    @Test func aStreamEndingBeforeItsEndIsACutAnswer() async throws {
        let chat = try await ChatStandIn(["--cut-after", "2"])
        let result = await Self.ask(try chat.client(chat.configuration()))
        #expect(result.code == .dependencyUnavailable)
        #expect(result.message.contains("cut short"))
        #expect(result.text == "The pass")
        #expect(try await chat.requests() == 1)
    }

    @Test func aFinishReasonWithoutDoneCompletesTheAnswer() async throws {
        let chat = try await ChatStandIn(["--finish-reason", "length", "--no-done", "1"])
        let result = await Self.ask(try chat.client(chat.configuration()))
        #expect(result.error == nil, "\(result.message)")
        #expect(result.summary?.finishReason == "length")
    }

    @Test func retriesSpentOnA500StormAreUnavailability() async throws {
        let chat = try await ChatStandIn(["--status-first", "100", "--status", "500"])
        let result = await Self.ask(try chat.client(chat.configuration(maxRetries: 2)))
        #expect(result.code == .dependencyUnavailable)
        #expect(result.message.contains("HTTP 500"))
        #expect(try await chat.requests() == 3)
    }

    @Test func anUnreachableServerIsUnavailability() async throws {
        let chat = try await ChatStandIn()
        var configuration = chat.configuration(maxRetries: 1)
        configuration.baseURL = "http://127.0.0.1:1/v1"
        let result = await Self.ask(try chat.client(configuration))
        #expect(result.code == .dependencyUnavailable)
        #expect(RunExitCode(for: try #require(result.error)) == .dependencyUnavailable)
    }

    @Test func aRejectedKeyIsARefusalThatNamesNoKey() async throws {
        let chat = try await ChatStandIn()
        let wrong = "sk-wrong-\(UUID().uuidString)"
        let result = await Self.ask(try chat.client(chat.configuration(), key: wrong))
        #expect(result.code == .providerRefused)
        #expect(RunExitCode(for: try #require(result.error)) == .providerRefused)
        #expect(!result.message.contains(wrong))
        #expect(!result.message.contains(chat.key))
        #expect(try await chat.requests() == 1)
    }

    @Test func aModelTheServerRefusesIsAConfigurationError() async throws {
        let chat = try await ChatStandIn()
        var configuration = chat.configuration()
        configuration.model = "other-model"
        let result = await Self.ask(try chat.client(configuration))
        #expect(result.code == .configuration)
        #expect(result.message.contains("model"))
        #expect(try await chat.requests() == 1)
    }

    @Test func azureSendsTheKeyAsApiKeyToTheDeployment() async throws {
        let chat = try await ChatStandIn()
        var configuration = chat.configuration()
        configuration.provider = .azureOpenAI
        configuration.baseURL = chat.server.baseURL + "/openai/deployments/gpt"
        let client = try chat.client(configuration)
        let request = try client.request(for: Self.prompt)
        #expect(request.url.hasSuffix("/openai/deployments/gpt/chat/completions?api-version=2024-06-01"))
        #expect(request.headers.contains { $0.0 == "api-key" && $0.1 == chat.key })
        let result = await Self.ask(client)
        #expect(result.error == nil, "\(result.message)")
    }

    /// A provider registered from outside is a name the pipeline file may use, and the dialect it declares
    /// is the one spoken: its default address and model, its key header, no `api-version` it did not ask for.
    @Test func aProviderRegisteredFromOutsideSpeaksTheDialectItDeclares() async throws {
        let chat = try await ChatStandIn()
        let name = "test-chat-\(UUID().uuidString.prefix(8))"
        let provider = PipelineConfiguration.Answer.Provider(
            name,
            defaultBaseURL: chat.server.baseURL + "/v1",
            defaultModel: "registered-model",
            sendsKeyInAPIKeyHeader: true
        )
        PipelineConfiguration.Answer.Provider.register(provider)
        var configuration = try PipelineConfiguration.load(file: nil, overrides: ["answer.provider=\(name)"]).answer
        #expect(configuration.provider == provider)
        #expect(configuration.isConfigured)
        configuration.apiKeyEnv = chat.configuration().apiKeyEnv
        let client = try chat.client(configuration)
        let request = try client.request(for: Self.prompt)
        #expect(request.url == chat.server.baseURL + "/v1/chat/completions")
        #expect(request.headers.contains { $0.0 == "api-key" && $0.1 == chat.key })
        #expect(!request.headers.contains { $0.0 == "Authorization" })
        let body = String(decoding: request.body, as: UTF8.self)
        #expect(body.contains("\"model\":\"registered-model\""), "\(body)")
        #expect(!body.contains("stream_options"), "\(body)")
    }

    @Test func azureWithoutABaseURLAndAnUnsetKeyVariableAreConfigurationErrors() throws {
        var configuration = PipelineConfiguration.Answer()
        configuration.provider = .azureOpenAI
        #expect(throws: SluiceError.self) { _ = try ChatClient(configuration: configuration, environment: [:]) }
        var unset = PipelineConfiguration.Answer()
        unset.apiKeyEnv = "SLUICE_TEST_UNSET_VARIABLE"
        #expect {
            _ = try ChatClient(configuration: unset, environment: [:])
        } throws: { error in
            (error as? SluiceError)?.code == .configuration
        }
    }
}
