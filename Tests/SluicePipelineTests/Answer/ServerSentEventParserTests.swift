import Testing

@testable import SluicePipeline

/// Server-sent events split anywhere: every chunk size gives the same events.
@Suite struct ServerSentEventParserTests {
    /// A stream with every rule in it: a BOM, comments, `\r\n`, a lone `\r`, `\n`, a field without a colon,
    /// `data:` without its space, multi-line data, an event type, an event without data, and a multi-byte
    /// character (split by the small chunk sizes).
    static let stream = Array(
        ("\u{FEFF}: keep-alive\r\n\r\n"
            + "data: {\"a\":1}\r\n\r\n"
            + "data:no space\r\rdata: first\ndata: second\n\n"
            + "event: error\ndata: {\"error\":{\"message\":\"overloaded\"}}\n\n"
            + "id: 7\nretry: 100\n\n"
            + "data\n\n"
            + "data: Grüße 👋\n\n"
            + "data: [DONE]\n\n").utf8
    )

    static let expected = [
        ServerSentEvent(data: #"{"a":1}"#),
        ServerSentEvent(data: "no space"),
        ServerSentEvent(data: "first\nsecond"),
        ServerSentEvent(event: "error", data: #"{"error":{"message":"overloaded"}}"#),
        ServerSentEvent(data: ""),
        ServerSentEvent(data: "Grüße 👋"),
        ServerSentEvent(data: "[DONE]"),
    ]

    @Test(arguments: [1, 2, 3, 5, 7, 16, 64, 4096])
    func anyChunkSizeGivesTheSameEvents(chunkSize: Int) {
        var parser = ServerSentEventParser()
        var events: [ServerSentEvent] = []
        var start = 0
        while start < Self.stream.count {
            let end = min(start + chunkSize, Self.stream.count)
            events += parser.feed(Self.stream[start..<end])
            start = end
        }
        events += parser.finish()
        #expect(events == Self.expected)
    }

    @Test func aCarriageReturnEndingAChunkAndALineFeedStartingTheNextAreOneLineEnd() {
        var parser = ServerSentEventParser()
        #expect(parser.feed(Array("data: x\r".utf8)).isEmpty)
        // "\n" completes the "\r\n" of the data line; the next "\r\n" is the blank line.
        #expect(parser.feed(Array("\n\r\n".utf8)) == [ServerSentEvent(data: "x")])
    }

    @Test func theLastEventIsKeptWhenTheStreamEndsWithoutABlankLine() {
        var parser = ServerSentEventParser()
        #expect(parser.feed(Array("data: a\n\ndata: [DONE]".utf8)) == [ServerSentEvent(data: "a")])
        #expect(parser.finish() == [ServerSentEvent(data: "[DONE]")])
        #expect(parser.finish().isEmpty)
    }

    @Test func commentsAloneAreNoEvents() {
        var parser = ServerSentEventParser()
        #expect(parser.feed(Array(": ping\n\n: ping\n\n".utf8)).isEmpty)
        #expect(parser.finish().isEmpty)
    }
}

/// What the events of a streamed chat completion mean.
@Suite struct ChatStreamItemTests {
    @Test func textUsageDoneAndErrors() {
        let delta = #"{"model":"m","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}"#
        #expect(ChatStreamItem(ServerSentEvent(data: delta)) == .delta("Hi", model: "m"))
        let usage = #"{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}"#
        #expect(
            ChatStreamItem(ServerSentEvent(data: usage))
                == .usage(AnswerUsage(promptTokens: 10, completionTokens: 2, totalTokens: 12))
        )
        #expect(ChatStreamItem(ServerSentEvent(data: " [DONE]")) == .done)
        let error = #"{"error":{"message":"The model is overloaded","type":"server_error"}}"#
        #expect(ChatStreamItem(ServerSentEvent(data: error)) == .error("The model is overloaded"))
        #expect(ChatStreamItem(ServerSentEvent(event: "error", data: #"{"detail":"x"}"#)) == .error(#"{"detail":"x"}"#))
        if case .error = ChatStreamItem(ServerSentEvent(data: "<html>502</html>")) {
        } else {
            Issue.record("an event that is not JSON must be an error")
        }
        let finish = #"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#
        #expect(ChatStreamItem(ServerSentEvent(data: finish)) == .delta("", model: nil, finishReason: "stop"))
        #expect(
            ChatStreamItem(ServerSentEvent(data: #"{"choices":[{"index":0,"delta":{"role":"assistant"}}]}"#))
                == .ignored
        )
    }

    @Test func afterDoneNothingCounts() throws {
        var reader = ChatStreamReader()
        let items = reader.items(
            from: Array(
                "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: [DONE]\n\ndata: {\"error\":\"late\"}\n\n"
                    .utf8
            )
        )
        var text = ""
        for item in items { text += try reader.take(item) ?? "" }
        #expect(text == "a")
        #expect(reader.isDone)
        #expect(reader.started)
    }
}
