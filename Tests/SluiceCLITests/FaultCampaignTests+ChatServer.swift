import Foundation
import SluiceTesting
import Testing

/// The campaign against the chat model behind `sluice ask` and `POST /v1/ask` (issue 37): a hostile
/// stand-in (`chat_standin.py --hostile`, and its transport faults) that streams without end, huge events,
/// slowly, malformed events, the wrong content type, and errors. Each answer must end within its budget
/// (tokens, bytes, `answer.timeout_seconds`) with the exit code of docs/DESIGN.md §7 — 6 for a misbehaving
/// or unavailable model, 5 for a refusal, 1 for a request the model refuses as wrong — and the same
/// failure over HTTP (503, 400) and as an SSE `error` event; `/health` keeps answering while asks stream.
extension FaultCampaignTests {
    struct ChatCase: Sendable, CustomTestStringConvertible {
        var name: String
        var server: [String]
        var extra: [String] = []
        /// The exit code of `sluice ask`.
        var exit: Int32
        /// The HTTP status of `POST /v1/ask` (JSON).
        var status: Int
        var testDescription: String { name }
    }

    static let allChatCases: [ChatCase] = {
        var cases: [ChatCase] = []
        let size = ["--size", "\(16 << 20)"]
        for (mode, extra) in [
            ("flood", []), ("huge-event", size), ("huge-line", size), ("huge-delta", size), ("json-huge", size),
            ("binary", size), ("html", []), ("malformed", []),
        ] as [(String, [String])] {
            cases.append(ChatCase(name: "hostile: \(mode)", server: ["--hostile", mode] + extra, exit: 6, status: 503))
        }
        for mode in ["drip", "keep-alive"] {
            cases.append(
                ChatCase(
                    name: "hostile: \(mode) past answer.timeout_seconds",
                    server: ["--hostile", mode, "--interval", "0.2"],
                    extra: ["--set", "answer.timeout_seconds=2"],
                    exit: 6,
                    status: 503
                )
            )
        }
        cases += [
            ChatCase(name: "a 500 storm", server: ["--status-first", "1000", "--status", "500"], exit: 6, status: 503),
            ChatCase(
                name: "a 429 storm with Retry-After 1e20",
                server: ["--status-first", "1000", "--status", "429", "--retry-after", "1e20"],
                extra: ["--set", "answer.max_retry_after_seconds=0.2"],
                exit: 6,
                status: 503
            ),
            ChatCase(name: "connection resets", server: ["--reset-first", "1000"], exit: 6, status: 503),
            ChatCase(name: "an error event after some text", server: ["--error-after", "2"], exit: 6, status: 503),
            ChatCase(name: "a stream cut after some text", server: ["--cut-after", "2"], exit: 6, status: 503),
            ChatCase(name: "401", server: ["--status-first", "1000", "--status", "401"], exit: 5, status: 503),
            ChatCase(name: "400", server: ["--status-first", "1000", "--status", "400"], exit: 1, status: 400),
        ]
        return cases
    }()

    static let representativeChatCases = ["hostile: flood", "hostile: huge-line"]

    @Test("a hostile chat server: ask exits 6, serve answers 503 and an SSE error", arguments: representativeChatCases)
    func chatServer(_ name: String) async throws {
        try await Self.chat(try #require(Self.allChatCases.first { $0.name == name }))
    }

    @Test(
        "the sweep: every hostile answer and transport fault of the chat server",
        .enabled(if: FaultCampaign.sweep),
        arguments: allChatCases.filter { !representativeChatCases.contains($0.name) }
    )
    func chatServerSweep(_ hostile: ChatCase) async throws {
        try await Self.chat(hostile)
    }

    static func chat(_ hostile: ChatCase) async throws {
        let (ws, target) = try await AskFixture.indexed("faults-chat")
        defer { ws.cleanUp() }
        let key = "sk-test-\(UUID().uuidString.lowercased())-campaign"
        let chat = try await StandInServer.launch(
            script: "chat_standin.py",
            arguments: ["--api-key", key, "--model", "test-model"] + hostile.server
        )
        defer { chat.stop() }
        let settings = AskFixture.settings(chat) + hostile.extra
        try await FaultCampaign.scenario(.input, "chat: \(hostile.name)") { scenario in
            let started = ContinuousClock.now
            let result = try await ws.sluice(
                ["ask", "When does the valve open?", ws.pipeline.path] + target.arguments + settings,
                environment: [AskFixture.keyVariable: key],
                timeout: .seconds(300)
            )
            let seconds = (ContinuousClock.now - started).components.seconds
            scenario.notes.append("ask exit \(String(describing: result.exitCode)) in \(seconds) s")
            scenario.expect(result.exitCode == hostile.exit, "ask: expected exit \(hostile.exit): \(result)")
            scenario.expect(!result.stderr.contains("Fatal error"), "a crash: \(result)")
            scenario.expect(result.stderr.contains("sluice: "), "no reason given: \(result)")
            scenario.expect(!(result.stderr + result.stdout).contains(key), "the key was shown")

            let server = try await ServeProcess.start(ws, target, settings, environment: [AskFixture.keyVariable: key])
            let question = Data(#"{"question": "When does the valve open?"}"#.utf8)
            let json = try await server.exchange("POST", "/v1/ask", body: question)
            scenario.expect(
                json.status == hostile.status,
                "POST /v1/ask: \(json.status), expected \(hostile.status): \(String(decoding: json.body, as: UTF8.self))"
            )
            let streamed = try await server.exchange(
                "POST",
                "/v1/ask",
                body: Data(#"{"question": "When does the valve open?", "stream": true}"#.utf8)
            )
            let events = String(decoding: streamed.body, as: UTF8.self)
            scenario.expect(events.contains("event: error\ndata: "), "no SSE error event: \(events.suffix(300))")
            scenario.expect(!events.contains("event: done"), "an SSE answer ended as done")
            let health = try await server.exchange("GET", "/health")
            scenario.expect(health.status == 200, "/health: \(health.status)")
            let log = try await server.stop()
            scenario.expect(!(log.stderr + log.stdout).contains(key), "the key is in the serve log")
        }
    }

    /// Two asks whose model floods at once, and `/health` asked again and again meanwhile: it must keep
    /// answering (the asks' reading yields the threads of the cooperative pool). The worst wait is
    /// recorded; the check is only that each `/health` answered 200 (a generous guard against a hang).
    @Test("/health answers while two asks read a flooding chat server", .enabled(if: FaultCampaign.sweep))
    func healthWhileAsksFlood() async throws {
        let (ws, target) = try await AskFixture.indexed("faults-chat-health")
        defer { ws.cleanUp() }
        let key = "sk-test-\(UUID().uuidString.lowercased())-health"
        let chat = try await StandInServer.launch(
            script: "chat_standin.py",
            arguments: ["--api-key", key, "--model", "test-model", "--hostile", "flood"]
        )
        defer { chat.stop() }
        // A generous token budget: each ask reads for a while before its budget stops it.
        let settings = AskFixture.settings(chat) + ["--set", "answer.max_answer_tokens=20000"]
        let server = try await ServeProcess.start(ws, target, settings, environment: [AskFixture.keyVariable: key])
        try await FaultCampaign.scenario(.fault, "chat: /health while two asks read a flood") { scenario in
            let question = Data(#"{"question": "When does the valve open?", "stream": true}"#.utf8)
            async let first = server.exchange("POST", "/v1/ask", body: question)
            async let second = server.exchange("POST", "/v1/ask", body: question)
            var worst = Duration.zero
            var answered = 0
            for _ in 0..<20 {
                let start = ContinuousClock.now
                let health = try await server.exchange("GET", "/health")
                worst = max(worst, ContinuousClock.now - start)
                if health.status == 200 { answered += 1 }
            }
            let asks = try await [first, second]
            scenario.notes.append("20 of 20 /health answered; worst \(worst)")
            scenario.expect(answered == 20, "/health answered \(answered) of 20")
            scenario.expect(worst < .seconds(30), "/health waited \(worst)")
            for ask in asks {
                let events = String(decoding: ask.body, as: UTF8.self)
                scenario.expect(events.contains("dependency-unavailable"), "an ask: \(events.suffix(300))")
            }
        }
        _ = try await server.stop()
    }
}
