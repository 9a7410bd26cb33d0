import Foundation
import SluiceClient
import SluiceTesting
import Testing

/// `POST /v1/ask` on `sluice serve`: the same answer and sources as `sluice ask --json`, as one JSON
/// object or as server-sent events, against the chat stand-in (Sources/SluiceTesting/StandIns/chat_standin.py);
/// 404 without an `answer` section.
@Suite(.serialized)
struct ServeAskCLITests {
    static let keyVariable = "SLUICE_TEST_CHAT_KEY"

    @Test("POST /v1/ask: JSON with numbered, cited sources; SSE text, sources, done; 404 without an answer section")
    func askOverHTTP() async throws {
        let ws = try Workspace("serve-ask")
        defer { ws.cleanUp() }
        let target = ws.target("t")
        try "# Valves\n\nThe sluice valve opens at dawn and closes at dusk.\n".write(
            to: ws.corpus.appendingPathComponent("valves.md"),
            atomically: true,
            encoding: .utf8
        )
        try "Gates are painted green every spring.\n".write(
            to: ws.corpus.appendingPathComponent("gates.txt"),
            atomically: true,
            encoding: .utf8
        )
        try await ws.run(target, expecting: 0)
        let key = "sk-test-\(UUID().uuidString.lowercased())-serve"
        let chat = try await StandInServer.launch(
            script: "chat_standin.py",
            arguments: ["--api-key", key, "--model", "test-model", "--max-context-tokens", "300"]
        )
        defer { chat.stop() }

        // No answer section: 404 with a code.
        let plain = try await ServeProcess.start(ws, target)
        let refused = try await plain.exchange("POST", "/v1/ask", body: Data(#"{"question": "When?"}"#.utf8))
        #expect(refused.status == 404 && ServeProcess.errorCode(refused.body) == "not-found")
        _ = try await plain.stop()

        let server = try await ServeProcess.start(
            ws,
            target,
            [
                "--set", "answer.base_url=\(chat.baseURL)/v1", "--set", "answer.model=test-model",
                "--set", "answer.api_key_env=\(Self.keyVariable)", "--set", "answer.max_context_tokens=300",
            ],
            environment: [Self.keyVariable: key]
        )
        let question = #"{"question": "When does the sluice valve open?", "k": 2}"#
        let answered = try await server.exchange("POST", "/v1/ask", body: Data(question.utf8))
        #expect(answered.status == 200, "\(String(decoding: answered.body, as: UTF8.self))")
        let object = try #require(try JSONSerialization.jsonObject(with: answered.body) as? [String: Any])
        #expect((object["answer"] as? String)?.isEmpty == false)
        let sources = try #require(object["sources"] as? [[String: Any]])
        #expect(sources.count == 2 && sources.first?["number"] as? Int == 1)
        #expect(sources.contains { $0["document_key"] as? String == "valves.md" })
        #expect(object["model"] as? String == "test-model")

        let streamed = try await server.exchange(
            "POST",
            "/v1/ask",
            body: Data(#"{"question": "When does the sluice valve open?", "stream": true}"#.utf8)
        )
        #expect(streamed.status == 200)
        #expect(streamed.headers.first { $0.key.lowercased() == "content-type" }?.value == "text/event-stream")
        let text = String(decoding: streamed.body, as: UTF8.self)
        let events = text.split(separator: "\n").filter { $0.hasPrefix("event: ") }.map { $0.dropFirst(7) }
        #expect(events.first == "text" && events.suffix(3) == ["check", "sources", "done"], "\(events)")
        #expect(!text.contains(key), "the key never leaves the server")

        // The Swift client: the same answer, and its events.
        let client = server.client()
        let viaClient = try await client.ask(AskRequest(question: "When does the sluice valve open?", k: 2))
        #expect(viaClient.answer?.isEmpty == false && viaClient.sources.count == 2)
        var kinds: [String] = []
        for try await event in client.askStream(AskRequest(question: "When does the sluice valve open?")) {
            switch event {
            case .text: if kinds.last != "text" { kinds.append("text") }
            case .check(let check): kinds.append(check.cited.isEmpty ? "check-uncited" : "check")
            case .sources: kinds.append("sources")
            case .done(let done): kinds.append(done.answer == nil ? "done-empty" : "done")
            }
        }
        #expect(kinds == ["text", "check", "sources", "done"])

        let bad = try await server.exchange("POST", "/v1/ask", body: Data(#"{"question": " "}"#.utf8))
        #expect(bad.status == 400 && ServeProcess.errorCode(bad.body) == "usage")
        let result = try await server.stop()
        #expect(result.exitCode == 0, "\(result)")
        #expect(!result.stdout.contains(key) && !result.stderr.contains(key))
    }

    /// An `answer` section that cannot be used stops `serve` at start-up with its reason (issue 30): before,
    /// the server started and answered every ask 404 "no answer model configured".
    @Test("serve with an unusable answer section exits 1 at start-up, naming what is wrong")
    func unusableAnswerSectionStopsTheStart() async throws {
        let ws = try Workspace("serve-ask-broken")
        defer { ws.cleanUp() }
        let target = ws.target("t")
        try "Gates are painted green every spring.\n".write(
            to: ws.corpus.appendingPathComponent("gates.txt"),
            atomically: true,
            encoding: .utf8
        )
        try await ws.run(target, expecting: 0)
        let unset = "SLUICE_TEST_UNSET_CHAT_KEY"
        let result = try await ws.sluice(
            ["serve", ws.pipeline.path] + target.arguments
                + [
                    "--port", "0", "--set", "answer.base_url=http://127.0.0.1:9/v1", "--set", "answer.model=m",
                    "--set", "answer.api_key_env=\(unset)",
                ],
            timeout: .seconds(120)
        )
        #expect(result.exitCode == 1, "\(result)")
        #expect(result.stderr.contains(unset), "\(result)")
    }
}
