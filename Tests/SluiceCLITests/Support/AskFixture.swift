import Foundation
import SluiceTesting
import Testing

/// What the tests of `ask` against a hostile chat server share (`AskHostileServerCLITests`, the campaign's
/// `FaultCampaignTests+ChatServer`): a one-document index and the settings that point `ask` and `serve`
/// at a chat stand-in.
enum AskFixture {
    /// The variable the key is passed in.
    static let keyVariable = "SLUICE_TEST_CHAT_KEY"

    /// A workspace whose corpus (one short Markdown document) is indexed.
    static func indexed(_ label: String) async throws -> (Workspace, Workspace.Target) {
        let ws = try Workspace(label)
        try "# Valves\n\nThe sluice valve opens at dawn and closes at dusk.\n".write(
            to: ws.corpus.appendingPathComponent("valves.md"),
            atomically: true,
            encoding: .utf8
        )
        let target = ws.target("index")
        try await ws.run(target, expecting: 0)
        return (ws, target)
    }

    /// The `answer` settings for `chat`: one retry, 64 answer tokens, the key from ``keyVariable``.
    static func settings(_ chat: StandInServer) -> [String] {
        [
            "--set", "answer.base_url=\(chat.baseURL)/v1", "--set", "answer.model=test-model",
            "--set", "answer.api_key_env=\(keyVariable)", "--set", "answer.max_retries=1",
            "--set", "answer.max_answer_tokens=64",
        ]
    }
}
