import Foundation
import SluiceCore
import SluiceHTTP
import SluiceTesting

@testable import SluicePipeline

/// The chat stand-in (Sources/SluiceTesting/StandIns/chat_standin.py) and a client for it.
struct ChatStandIn {
    static let keyVariable = "SLUICE_TEST_CHAT_KEY"
    let server: StandInServer
    /// A key that appears nowhere but in the environment and the stand-in's memory.
    let key = "sk-test-\(UUID().uuidString.lowercased())-chat"

    init(_ arguments: [String] = []) async throws {
        server = try await StandInServer.launch(
            script: "chat_standin.py",
            arguments: ["--api-key", key, "--model", "test-model", "--max-tokens", "64"] + arguments
        )
    }

    func configuration(maxRetries: Int = 3) -> PipelineConfiguration.Answer {
        var answer = PipelineConfiguration.Answer()
        answer.baseURL = server.baseURL + "/v1"
        answer.model = "test-model"
        answer.apiKeyEnv = Self.keyVariable
        answer.maxAnswerTokens = 64
        answer.maxRetries = maxRetries
        // A guard against a hang only: the full suite on two cores has starved a stand-in for a minute.
        answer.timeoutSeconds = 600
        return answer
    }

    /// A client whose retries wait at most a millisecond (the waits are not what these tests are about).
    func client(_ configuration: PipelineConfiguration.Answer, key: String? = nil) throws -> ChatClient {
        try ChatClient(
            configuration: configuration,
            environment: [Self.keyVariable: key ?? self.key],
            backoff: Backoff(base: .milliseconds(1), cap: .milliseconds(1))
        )
    }

    func stats() async throws -> [String: Any] {
        let response = try await HTTPClient.shared.send(HTTPRequest(url: server.baseURL + "/stats"))
        return (try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]) ?? [:]
    }

    func requests() async throws -> Int { try await stats()["requests"] as? Int ?? -1 }

    func control(_ json: String) async throws {
        _ = try await HTTPClient.shared.send(.postJSON(server.baseURL + "/control", body: Array(json.utf8)))
    }
}
