import Foundation
import SluiceCore
import SluiceHTTP
import SluiceTesting
import Testing

/// ``HTTPClient/stream(_:)``: the head first, the body as it arrives, the same errors as `send`.
@Suite struct HTTPClientStreamingTests {
    let server: StandInServer
    init() async throws { server = try await StandInServer.launch(script: "http_echo.py") }

    @Test func aBodyArrivesWhole() async throws {
        let response = try await HTTPClient.shared.stream(HTTPRequest(url: "\(server.baseURL)/big?bytes=300000"))
        #expect(response.status == 200)
        var total = 0
        for try await chunk in response.body {
            #expect(chunk.allSatisfy { $0 == UInt8(ascii: "a") })
            total += chunk.count
        }
        #expect(total == 300_000)
    }

    @Test func anErrorStatusIsAResponseWhoseBodyCanBeCollected() async throws {
        let response = try await HTTPClient.shared.stream(HTTPRequest(url: "\(server.baseURL)/status/503"))
        #expect(response.status == 503)
        #expect(response.headers["x-test"] == "yes")
        #expect(try await response.collect().bodyText == "status body")
    }

    @Test func aResetBeforeTheHeadIsANetworkError() async throws {
        await #expect {
            _ = try await HTTPClient.shared.stream(HTTPRequest(url: "\(server.baseURL)/reset"))
        } throws: { error in
            (error as? SluiceError)?.code == .network
        }
    }

    @Test func aBodyOverTheLimitEndsTheStreamWithTooLarge() async throws {
        var configuration = HTTPClient.Configuration()
        configuration.maxResponseBytes = 1000
        let client = HTTPClient(configuration: configuration)
        await #expect {
            let response = try await client.stream(HTTPRequest(url: "\(server.baseURL)/big?bytes=500000"))
            for try await _ in response.body {}
        } throws: { error in
            (error as? SluiceError)?.code == .tooLarge
        }
    }

    /// The chat stand-in holds its stream after two events until told to go on: the first events must
    /// arrive while it holds (no timing involved).
    @Test func chunksArriveBeforeTheBodyEnds() async throws {
        let chat = try await StandInServer.launch(
            script: "chat_standin.py",
            arguments: ["--hold-after", "2", "--require-passages", "0", "--expect-cite-instruction", "0"]
        )
        let body =
            #"{"stream": true, "messages": [{"role": "system", "content": ""}, {"role": "user", "content": "Question: ?"}]}"#
        let response = try await HTTPClient.shared.stream(
            .postJSON("\(chat.baseURL)/v1/chat/completions", body: Array(body.utf8))
        )
        #expect(response.status == 200)
        #expect(response.headers["content-type"] == "text/event-stream")
        var text = ""
        var iterator = response.body.makeAsyncIterator()
        while !text.contains("pass") {
            let chunk = try #require(try await iterator.next(), "the body ended while the stand-in held it")
            text += String(decoding: chunk, as: UTF8.self)
        }
        #expect(!text.contains("[DONE]"))
        _ = try await HTTPClient.shared.send(
            .postJSON("\(chat.baseURL)/control", body: Array(#"{"release": true}"#.utf8))
        )
        while let chunk = try await iterator.next() { text += String(decoding: chunk, as: UTF8.self) }
        #expect(text.hasSuffix("data: [DONE]\n\n"))
    }
}

/// A reader that stops reading abandons the transfer: the connection closes, and the server's later writes fail.
@Suite struct HTTPClientStreamAbandonTests {
    static func stats(_ server: StandInServer) async throws -> [String: Any] {
        let response = try await HTTPClient.shared.send(HTTPRequest(url: server.baseURL + "/stats"))
        return (try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]) ?? [:]
    }

    @Test func cancellingTheReaderClosesTheConnection() async throws {
        let chat = try await StandInServer.launch(
            script: "chat_standin.py",
            arguments: [
                "--hold-after", "1", "--require-passages", "0", "--expect-cite-instruction", "0",
                "--answer", String(repeating: "many words to write after the hold. ", count: 200),
            ]
        )
        let body =
            #"{"stream": true, "messages": [{"role": "system", "content": ""}, {"role": "user", "content": "Question: ?"}]}"#
        let client = HTTPClient()
        let response = try await client.stream(.postJSON("\(chat.baseURL)/v1/chat/completions", body: Array(body.utf8)))
        let reader = Task {
            var bytes = 0
            for try await chunk in response.body { bytes += chunk.count }
            return bytes
        }
        // Wait (for an event, not a time) until the stand-in holds its stream, then stop reading. The deadline
        // only ends a hang: a full suite on two loaded cores took minutes to get here.
        let deadline = ContinuousClock.now + .seconds(600)
        while try await Self.stats(chat)["held"] as? Int != 1 {
            try #require(ContinuousClock.now < deadline, "the stand-in never held its stream")
            try await Task.sleep(for: .milliseconds(10))
        }
        reader.cancel()
        _ = await reader.result
        _ = try await HTTPClient.shared.send(
            .postJSON("\(chat.baseURL)/control", body: Array(#"{"release": true}"#.utf8))
        )
        while try await Self.stats(chat)["broken"] as? Int != 1 {
            try #require(ContinuousClock.now < deadline, "the stand-in wrote its whole answer: the transfer went on")
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(try await Self.stats(chat)["answered"] as? Int == 0)
    }
}
