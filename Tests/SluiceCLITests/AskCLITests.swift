import Foundation
import SluiceCore
import SluiceHTTP
import SluiceTesting
import Testing

/// `sluice ask` end to end: a tiny corpus indexed with the hash embedder, the chat stand-in
/// (Sources/SluiceTesting/StandIns/chat_standin.py) as the model.
@Suite(.serialized)
struct AskCLITests {
    static let keyVariable = "SLUICE_TEST_CHAT_KEY"
    /// A key that appears nowhere but in the environment and the stand-in's memory.
    let key = "sk-test-\(UUID().uuidString.lowercased())-ask"

    /// A workspace whose corpus (three short Markdown documents) is indexed.
    func indexed(_ label: String) async throws -> (Workspace, Workspace.Target) {
        let ws = try Workspace(label)
        try "# Valves\n\nThe sluice valve opens at dawn and closes at dusk.\n".write(
            to: ws.corpus.appendingPathComponent("valves.md"),
            atomically: true,
            encoding: .utf8
        )
        try "# Weather\n\nRain is expected in the afternoon, with wind from the west.\n".write(
            to: ws.corpus.appendingPathComponent("weather.md"),
            atomically: true,
            encoding: .utf8
        )
        try "Gates are painted green every spring.\n".write(
            to: ws.corpus.appendingPathComponent("gates.txt"),
            atomically: true,
            encoding: .utf8
        )
        let target = ws.target("index")
        try await ws.run(target, expecting: 0)
        return (ws, target)
    }

    func server(_ arguments: [String] = []) async throws -> StandInServer {
        try await StandInServer.launch(
            script: "chat_standin.py",
            arguments: ["--api-key", key, "--model", "test-model", "--max-context-tokens", "300"] + arguments
        )
    }

    func askArguments(
        _ ws: Workspace,
        _ target: Workspace.Target,
        _ server: StandInServer,
        _ extra: [String]
    ) -> [String] {
        ["ask", "When does the sluice valve open?", ws.pipeline.path] + target.arguments + [
            "--set", "answer.base_url=\(server.baseURL)/v1", "--set", "answer.model=test-model",
            "--set", "answer.api_key_env=\(Self.keyVariable)", "--set", "answer.max_context_tokens=300",
            "--set", "answer.max_retries=2", "--set", "answer.timeout_seconds=60",
        ] + extra
    }

    func ask(
        _ ws: Workspace,
        _ target: Workspace.Target,
        _ server: StandInServer,
        _ extra: [String] = [],
        key: String? = nil
    ) async throws -> CommandResult {
        try await ws.sluice(
            askArguments(ws, target, server, extra),
            environment: [Self.keyVariable: key ?? self.key],
            timeout: .seconds(120)
        )
    }

    static func stats(_ server: StandInServer) async throws -> [String: Any] {
        let response = try await HTTPClient.shared.send(HTTPRequest(url: server.baseURL + "/stats"))
        return try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    @Test func theAnswerThenItsNumberedSources() async throws {
        let (ws, target) = try await indexed("ask-text")
        defer { ws.cleanUp() }
        let server = try await server()
        let result = try await ask(ws, target, server, ["--log-level", "trace"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.hasPrefix("The passages say so [1].\n\nSources:\n[1] valves.md, Valves  (score "))
        #expect(result.stdout.contains(", not cited)\n"))
        #expect(!result.stdout.contains(key) && !result.stderr.contains(key))
        let last = try #require(try await Self.stats(server)["last"] as? [String: Any])
        #expect(last["passages"] as? Int == 3)
        #expect((last["passage_tokens"] as? Int ?? 1000) <= 300)
    }

    /// A budget smaller than the passages: the stand-in counts them with tiktoken itself and refuses a
    /// prompt over the budget, so this also checks our cl100k_base count against tiktoken's.
    @Test(arguments: [40, 90])
    func thePassagesAreCutToTheBudget(budget: Int) async throws {
        let (ws, target) = try await indexed("ask-budget")
        defer { ws.cleanUp() }
        let long = (1...60).map { "The sluice valve number \($0) opens at dawn; its gate is painted green." }
        try long.joined(separator: " ").write(
            to: ws.corpus.appendingPathComponent("long.txt"),
            atomically: true,
            encoding: .utf8
        )
        try await ws.run(target, expecting: 0)
        let server = try await server(["--max-context-tokens", "\(budget)"])
        let result = try await ask(ws, target, server, ["--json", "--set", "answer.max_context_tokens=\(budget)"])
        #expect(result.exitCode == 0, "\(result)")
        let last = try #require(try await Self.stats(server)["last"] as? [String: Any])
        let tokens = try #require(last["passage_tokens"] as? Int)
        #expect(tokens <= budget && tokens > budget / 2)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let sources = try #require(object["sources"] as? [[String: Any]])
        #expect(sources.last?["truncated"] as? Bool == true)
        #expect(sources.count == last["passages"] as? Int)
    }

    @Test func jsonIsOneObjectWithSearchsFieldNames() async throws {
        let (ws, target) = try await indexed("ask-json")
        defer { ws.cleanUp() }
        let server = try await server()
        let result = try await ask(ws, target, server, ["--json", "-k", "2"])
        #expect(result.exitCode == 0, "\(result)")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
            "\(result)"
        )
        #expect(
            Set(object.keys) == [
                "answer", "reason", "sources", "check", "withheld_answer", "model", "usage", "finish_reason", "rerank",
            ]
        )
        let check = try #require(object["check"] as? [String: Any])
        #expect(check["cited"] as? [Int] == [1])
        #expect(object["withheld_answer"] is NSNull)
        #expect(object["rerank"] is NSNull, "no reranker in this pipeline")
        #expect(object["finish_reason"] as? String == "stop")
        #expect(object["answer"] as? String == "The passages say so [1].")
        #expect(object["reason"] is NSNull)
        #expect(object["model"] as? String == "test-model")
        let usage = try #require(object["usage"] as? [String: Int])
        #expect((usage["completion_tokens"] ?? 0) > 0)
        let sources = try #require(object["sources"] as? [[String: Any]])
        #expect(sources.count == 2)
        let first = try #require(sources.first)
        #expect(
            Set(first.keys) == [
                "number", "id", "document_key", "page", "headings", "score", "rerank_score", "text", "truncated",
                "cited",
            ]
        )
        #expect(first["document_key"] as? String == "valves.md")
        #expect(first["headings"] as? [String] == ["Valves"])
        #expect(first["page"] is NSNull)
        #expect(first["number"] as? Int == 1)
        #expect(first["cited"] as? Bool == true)
        #expect(sources.last?["cited"] as? Bool == false)
    }

    @Test func anAnswerCutByItsTokenLimitSaysSo() async throws {
        let (ws, target) = try await indexed("ask-length")
        defer { ws.cleanUp() }
        let server = try await server(["--finish-reason", "length"])
        let result = try await ask(ws, target, server)
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            result.stdout.hasSuffix("(the answer stopped at answer.max_answer_tokens: raise it for a longer one)\n")
        )
    }

    @Test func nothingRelevantSaysSoWithoutCallingTheModel() async throws {
        let (ws, target) = try await indexed("ask-nothing")
        defer { ws.cleanUp() }
        let server = try await server()
        let text = try await ask(ws, target, server, ["--set", "answer.min_score=1.5"])
        #expect(text.exitCode == 0, "\(text)")
        #expect(text.stdout.contains("nothing relevant was retrieved"))
        #expect(text.stdout.contains("answer.min_score"))
        let json = try await ask(ws, target, server, ["--set", "answer.min_score=1.5", "--json"])
        #expect(json.exitCode == 0, "\(json)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["answer"] is NSNull)
        #expect((object["reason"] as? String)?.contains("answer.min_score") == true)
        #expect((object["sources"] as? [Any])?.isEmpty == true)
        #expect(try await Self.stats(server)["requests"] as? Int == 0)
    }

    @Test func aFilterChoosesThePassages() async throws {
        let (ws, target) = try await indexed("ask-filter")
        defer { ws.cleanUp() }
        let server = try await server()
        let weather = try await ask(ws, target, server, ["--json", "--filter", #"document_key ^= "weather""#])
        #expect(weather.exitCode == 0, "\(weather)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(weather.stdout.utf8)) as? [String: Any])
        let keys = (object["sources"] as? [[String: Any]] ?? []).compactMap { $0["document_key"] as? String }
        #expect(keys == ["weather.md"])
        let none = try await ask(ws, target, server, ["--filter", #"document_key ^= "nowhere/""#])
        #expect(none.exitCode == 0, "\(none)")
        #expect(none.stdout.contains("no passage matches the filter"))
        #expect(try await Self.stats(server)["requests"] as? Int == 1)
    }

    @Test func aRejectedKeyExits5AndTheKeyAppearsNowhere() async throws {
        let (ws, target) = try await indexed("ask-key")
        defer { ws.cleanUp() }
        let server = try await server()
        let wrong = "sk-wrong-\(UUID().uuidString.lowercased())"
        let result = try await ask(ws, target, server, ["--log-level", "trace"], key: wrong)
        #expect(result.exitCode == 5, "\(result)")
        #expect(result.stderr.contains("refused"))
        for secret in [wrong, key] {
            #expect(!result.stdout.contains(secret) && !result.stderr.contains(secret))
        }
    }

    @Test func anUnreachableModelExits6() async throws {
        let (ws, target) = try await indexed("ask-unreachable")
        defer { ws.cleanUp() }
        let server = try await server()
        let result = try await ask(ws, target, server, ["--set", "answer.base_url=http://127.0.0.1:1/v1"])
        #expect(result.exitCode == 6, "\(result)")
        #expect(result.stdout.isEmpty)
    }

    @Test func retriesBeforeTheFirstTokenAreInvisible() async throws {
        let (ws, target) = try await indexed("ask-retry")
        defer { ws.cleanUp() }
        let server = try await server([
            "--status-first", "1", "--status", "429", "--retry-after", "0", "--reset-first", "1",
        ])
        let result = try await ask(ws, target, server)
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.hasPrefix("The passages say so [1]."))
        #expect(try await Self.stats(server)["requests"] as? Int == 3)
    }

    /// Text shown stays; text held back (no citation yet) is never shown.
    @Test func anErrorMidStreamKeepsTheTextShownAndExits6() async throws {
        let (ws, target) = try await indexed("ask-midstream")
        defer { ws.cleanUp() }
        let server = try await server(["--error-after", "2", "--answer", "[1] The passages say so."])
        let result = try await ask(ws, target, server)
        #expect(result.exitCode == 6, "\(result)")
        #expect(result.stdout == "[1] The \n")
        #expect(result.stderr.contains("cut short"))
        #expect(try await Self.stats(server)["requests"] as? Int == 1)

        let held = try await self.server(["--error-after", "2"])
        let uncited = try await ask(ws, target, held)
        #expect(uncited.exitCode == 6, "\(uncited)")
        #expect(uncited.stdout.isEmpty, "text before the first citation is held back")
    }

    /// An answer citing none of its passages is "not in the sources": its text is not shown as an answer.
    @Test func anUncitedAnswerIsNotInTheSources() async throws {
        let (ws, target) = try await indexed("ask-uncited")
        defer { ws.cleanUp() }
        let server = try await server(["--answer", "It opens at noon, I think."])
        let result = try await ask(ws, target, server)
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.hasPrefix("Not in the sources: "), "\(result)")
        #expect(!result.stdout.contains("noon"))
        #expect(result.stdout.contains("not cited)"))
        let json = try await ask(ws, target, server, ["--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["answer"] is NSNull)
        #expect(object["withheld_answer"] as? String == "It opens at noon, I think.")
        let shown = try await ask(ws, target, server, ["--set", "answer.require_citations=false"])
        #expect(shown.stdout.hasPrefix("It opens at noon, I think.\n\nSources:\n"), "\(shown)")
    }

    /// A made-up number and a quotation not in its passage are marked under the sources.
    @Test func madeUpCitationsAndQuotesAreMarked() async throws {
        let (ws, target) = try await indexed("ask-marks")
        defer { ws.cleanUp() }
        let server = try await server(["--answer", #"It says "the valve opens at noon" [1], see [9]."#])
        let result = try await ask(ws, target, server)
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("! [9] names no passage"), "\(result)")
        #expect(result.stdout.contains("! the quotation “the valve opens at noon” is not in [1]"), "\(result)")
    }

    /// The stand-in holds its answer after two pieces: they must be on standard output while it holds (the
    /// answer cites a passage in its first piece, so nothing is held back).
    @Test func theAnswerStreams() async throws {
        let (ws, target) = try await indexed("ask-stream")
        defer { ws.cleanUp() }
        let server = try await server(["--hold-after", "2", "--answer", "[1] The passages say so."])
        let process = try ws.start(askArguments(ws, target, server, []), environment: [Self.keyVariable: key])
        var shown = ""
        let deadline = ContinuousClock.now + .seconds(120)
        while !shown.hasPrefix("[1] The "), process.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
            shown = (try? String(contentsOf: process.stdoutURL, encoding: .utf8)) ?? ""
        }
        #expect(shown == "[1] The ", "\(process.stderrSoFar)")
        #expect(process.isRunning)
        _ = try await HTTPClient.shared.send(
            .postJSON(server.baseURL + "/control", body: Array(#"{"release": true}"#.utf8))
        )
        let result = try await process.wait(timeout: .seconds(120))
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.hasPrefix("[1] The passages say so.\n\nSources:\n"))
    }
}
