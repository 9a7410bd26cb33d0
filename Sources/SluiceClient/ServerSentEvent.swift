/// One server-sent event (`event:` and `data:` lines up to a blank line), as streaming endpoints such as
/// `POST /v1/ask` with `stream: true` send them.
public struct ServerSentEvent: Sendable, Hashable {
    /// The `event:` field; `message` when absent.
    public var event: String
    /// The `data:` lines, joined with newlines (JSON for Sluice's events).
    public var data: String
    public var id: String?

    public init(event: String = "message", data: String, id: String? = nil) {
        self.event = event
        self.data = data
        self.id = id
    }
}

/// Turns a stream's lines into ``ServerSentEvent``s (the WHATWG rules Sluice's events need: `event`,
/// `data`, `id`, comments, a blank line ends an event). Feed it lines from any byte source; a streaming
/// client method wraps it in an `AsyncThrowingStream<ServerSentEvent, any Error>`.
public struct ServerSentEventParser: Sendable {
    private var event: String?
    private var data: [String] = []
    private var id: String?

    public init() {}

    /// Takes one line (without its line break); returns the event a blank line completes.
    public mutating func feed(line: String) -> ServerSentEvent? {
        if line.isEmpty {
            defer {
                event = nil
                data = []
            }
            guard !data.isEmpty else { return nil }
            return ServerSentEvent(event: event ?? "message", data: data.joined(separator: "\n"), id: id)
        }
        if line.hasPrefix(":") { return nil }
        let field: Substring
        var value: Substring
        if let colon = line.firstIndex(of: ":") {
            field = line[..<colon]
            value = line[line.index(after: colon)...]
            if value.hasPrefix(" ") { value = value.dropFirst() }
        } else {
            field = Substring(line)
            value = ""
        }
        switch field {
        case "event": event = String(value)
        case "data": data.append(String(value))
        case "id": id = String(value)
        default: break
        }
        return nil
    }
}
