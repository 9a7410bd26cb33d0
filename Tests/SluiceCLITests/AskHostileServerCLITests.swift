import Foundation
import SluiceTesting
import Testing

/// Issue 37: `sluice ask` and `POST /v1/ask` against a hostile chat server (`chat_standin.py --hostile`):
/// an answer that streams without end or past its byte limit ends with exit 6 / HTTP 503 / an SSE `error`
/// event (a misbehaving dependency), and a key the server echoes back in another form (upper case,
/// URL-encoded, JSON-escaped, base64 in a `Basic` authorization) reaches neither stderr, nor the serve
/// log, nor the error body an API client gets.
@Suite(.serialized)
struct AskHostileServerCLITests {
    static let keyVariable = AskFixture.keyVariable
    /// Not shaped like an OpenAI key (which is redacted by its shape): only the key's forms can hide it.
    let key = "tok/\(UUID().uuidString.lowercased())+Key=x"

    /// The forms a server may echo the key in.
    var echoedForms: [String: String] {
        [
            "plain": key, "upper": key.uppercased(),
            "percent": key.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!,
            "json": key.replacingOccurrences(of: "/", with: "\\/"),
            "basic": Data("user:\(key)".utf8).base64EncodedString(),
        ]
    }

    /// The parts of any form that would give the key away: the first and last groups of the UUID in it
    /// (no encoding changes hex digits but their case), and the middle of the base64 form.
    func leaks(in text: String) -> [String] {
        let groups = key.dropFirst(4).prefix(36).split(separator: "-")
        var found: [String] = []
        for group in [groups.first!, groups.last!] where text.lowercased().contains(group) {
            found.append("the key's \(group)")
        }
        let basic = echoedForms["basic"]!
        let middle = String(basic.dropFirst(12).dropLast(12))
        if text.contains(middle) { found.append("the base64 form") }
        return found
    }

    func chat(_ arguments: [String]) async throws -> StandInServer {
        try await StandInServer.launch(
            script: "chat_standin.py",
            arguments: ["--api-key", key, "--model", "test-model"] + arguments
        )
    }

    @Test(
        "sluice ask: an endless or oversized answer exits 6 with what the server did",
        arguments: [
            ("flood", "tokens"), ("huge-line", "bytes"), ("html", "text/html"),
        ]
    )
    func askExitsSix(hostile: (String, String)) async throws {
        let (ws, target) = try await AskFixture.indexed("ask-hostile-\(hostile.0)")
        defer { ws.cleanUp() }
        let chat = try await chat(["--hostile", hostile.0])
        defer { chat.stop() }
        let result = try await ws.sluice(
            ["ask", "When does the valve open?", ws.pipeline.path] + target.arguments + AskFixture.settings(chat),
            environment: [Self.keyVariable: key],
            timeout: .seconds(300)
        )
        #expect(result.exitCode == 6, "\(hostile.0): \(result)")
        #expect(result.stderr.contains("misbehaved") && result.stderr.contains(hostile.1), "\(result.stderr)")
    }

    @Test(
        "sluice ask: a key echoed back in any form is redacted from stderr (exit 5)",
        arguments: [
            "plain", "upper", "percent", "json", "basic",
        ]
    )
    func askRedactsAnEchoedKey(form: String) async throws {
        let (ws, target) = try await AskFixture.indexed("ask-echo-\(form)")
        defer { ws.cleanUp() }
        let chat = try await chat(["--hostile", "echo-key", "--echo-form", form])
        defer { chat.stop() }
        let result = try await ws.sluice(
            ["ask", "When does the valve open?", ws.pipeline.path] + target.arguments + AskFixture.settings(chat)
                + ["--log-level", "trace"],
            environment: [Self.keyVariable: key]
        )
        #expect(result.exitCode == 5, "\(form): \(result)")
        #expect(result.stderr.contains("Incorrect API key provided"), "\(form): \(result.stderr)")
        #expect(leaks(in: result.stderr + result.stdout).isEmpty, "\(form): \(leaks(in: result.stderr)) in \(result)")
    }

    @Test("serve: 503 and an SSE error event for a hostile answer; an echoed key nowhere; /health answers")
    func serveAnswers503AndRedacts() async throws {
        let (ws, target) = try await AskFixture.indexed("serve-ask-hostile")
        defer { ws.cleanUp() }
        let flood = try await chat(["--hostile", "flood"])
        defer { flood.stop() }
        let server = try await ServeProcess.start(
            ws,
            target,
            AskFixture.settings(flood) + ["--log-level", "trace"],
            environment: [Self.keyVariable: key]
        )
        let question = Data(#"{"question": "When does the valve open?"}"#.utf8)
        let json = try await server.exchange("POST", "/v1/ask", body: question)
        #expect(json.status == 503, "\(String(decoding: json.body, as: UTF8.self))")
        #expect(ServeProcess.errorCode(json.body) == "dependency-unavailable")
        let streamed = try await server.exchange(
            "POST",
            "/v1/ask",
            body: Data(#"{"question": "When does the valve open?", "stream": true}"#.utf8)
        )
        let events = String(decoding: streamed.body, as: UTF8.self)
        #expect(events.contains("event: error\ndata: "), "\(events.suffix(500))")
        #expect(events.contains("dependency-unavailable"), "\(events.suffix(500))")
        let health = try await server.exchange("GET", "/health")
        #expect(health.status == 200)
        _ = try await server.stop()

        for form in ["upper", "percent", "json", "basic"] {
            let echo = try await chat(["--hostile", "echo-key", "--echo-form", form])
            defer { echo.stop() }
            let server = try await ServeProcess.start(
                ws,
                target,
                AskFixture.settings(echo) + ["--log-level", "trace"],
                environment: [Self.keyVariable: key]
            )
            let refused = try await server.exchange("POST", "/v1/ask", body: question)
            let body = String(decoding: refused.body, as: UTF8.self)
            #expect(refused.status == 503 && body.contains("Incorrect API key provided"), "\(form): \(body)")
            #expect(leaks(in: body).isEmpty, "\(form): the API error body has \(leaks(in: body)): \(body)")
            let streamed = try await server.exchange(
                "POST",
                "/v1/ask",
                body: Data(#"{"question": "When does the valve open?", "stream": true}"#.utf8)
            )
            let events = String(decoding: streamed.body, as: UTF8.self)
            #expect(leaks(in: events).isEmpty, "\(form): the SSE error has \(leaks(in: events))")
            let log = try await server.stop()
            #expect(leaks(in: log.stderr + log.stdout).isEmpty, "\(form): the serve log has \(leaks(in: log.stderr))")
        }
    }
}
