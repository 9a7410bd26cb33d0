/// The state of reading one streamed chat completion: the events parsed so far, whether text started,
/// whether `[DONE]` came, and what the server said about itself. A pure value, fed the body's chunks.
struct ChatStreamReader {
    /// An error event in the stream, or an event that is not JSON.
    struct StreamError: Error {
        var message: String
    }

    private var parser = ServerSentEventParser()
    /// True once any text arrived: from then on a failure cannot be retried.
    private(set) var started = false
    /// True once `data: [DONE]` arrived; later events are ignored.
    private(set) var isDone = false

    /// True when the answer is known to be whole: `[DONE]` or a finish reason arrived. A stream that ends
    /// without either was cut short, however cleanly its connection closed.
    var isComplete: Bool { isDone || finishReason != nil }
    /// The model's reason for stopping, once it said (a stream may end after it without `[DONE]`).
    private(set) var finishReason: String?
    private(set) var model: String?
    private(set) var usage: AnswerUsage?

    /// The items completed by `bytes`.
    mutating func items(from bytes: [UInt8]) -> [ChatStreamItem] {
        parser.feed(bytes).map(ChatStreamItem.init)
    }

    /// The items of an event the body ended in the middle of.
    mutating func finish() -> [ChatStreamItem] {
        parser.finish().map(ChatStreamItem.init)
    }

    /// Applies one item.
    /// - Returns: The text to show, if the item carried any.
    /// - Throws: ``StreamError`` for an error event.
    mutating func take(_ item: ChatStreamItem) throws(StreamError) -> String? {
        guard !isDone else { return nil }
        switch item {
        case .delta(let text, let model, let finishReason):
            if let model { self.model = model }
            if let finishReason { self.finishReason = finishReason }
            guard !text.isEmpty else { return nil }
            started = true
            return text
        case .usage(let usage):
            self.usage = usage
            return nil
        case .done:
            isDone = true
            return nil
        case .error(let message):
            throw StreamError(message: message)
        case .ignored:
            return nil
        }
    }
}
