/// One server-sent event: its `data` lines joined with `\n`, and its `event` type if it named one.
package struct ServerSentEvent: Sendable, Hashable {
    package var event: String?
    package var data: String

    package init(event: String? = nil, data: String) {
        self.event = event
        self.data = data
    }
}

/// Splits a `text/event-stream` body into events, as bytes arrive in chunks of any size.
///
/// Follows the WHATWG rules: lines end with `\r\n`, `\n` or `\r` (a `\r` at the end of one chunk and a `\n`
/// at the start of the next are one line end); a blank line dispatches the event; a line starting with `:`
/// is a comment (a keep-alive); `field: value` loses one leading space; an event without `data` lines is
/// not dispatched; `id` and `retry` are read and ignored. Lines are decoded as UTF-8 only once complete,
/// so a character split across chunks is kept whole. Unlike the browser, ``finish()`` dispatches a last
/// event that the stream ended without a blank line after (some servers end with `data: [DONE]\n`).
package struct ServerSentEventParser: Sendable {
    private var line: [UInt8] = []
    private var afterCarriageReturn = false
    private var dataLines: [String] = []
    private var eventType: String?
    private var sawStart = false

    package init() {}

    /// The events completed by `bytes`.
    package mutating func feed(_ bytes: some Sequence<UInt8>) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for byte in bytes {
            if afterCarriageReturn {
                afterCarriageReturn = false
                if byte == UInt8(ascii: "\n") { continue }
            }
            switch byte {
            case UInt8(ascii: "\r"):
                afterCarriageReturn = true
                endLine(into: &events)
            case UInt8(ascii: "\n"):
                endLine(into: &events)
            default:
                line.append(byte)
            }
        }
        return events
    }

    /// The last event, when the stream ended in the middle of it (nothing when it ended cleanly).
    package mutating func finish() -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        if !line.isEmpty { endLine(into: &events) }
        dispatch(into: &events)
        return events
    }

    private mutating func endLine(into events: inout [ServerSentEvent]) {
        var bytes = line[...]
        line.removeAll(keepingCapacity: true)
        if !sawStart {
            sawStart = true
            // A byte-order mark before the first line is not part of it.
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        }
        guard !bytes.isEmpty else { return dispatch(into: &events) }
        if bytes.first == UInt8(ascii: ":") { return }
        let text = String(decoding: bytes, as: UTF8.self)
        let name: Substring
        var value: Substring
        if let colon = text.firstIndex(of: ":") {
            name = text[..<colon]
            value = text[text.index(after: colon)...]
            if value.first == " " { value = value.dropFirst() }
        } else {
            name = text[...]
            value = ""
        }
        switch name {
        case "data": dataLines.append(String(value))
        case "event": eventType = String(value)
        default: break  // id, retry, unknown fields
        }
    }

    private mutating func dispatch(into events: inout [ServerSentEvent]) {
        defer {
            dataLines.removeAll()
            eventType = nil
        }
        guard !dataLines.isEmpty else { return }
        events.append(ServerSentEvent(event: eventType, data: dataLines.joined(separator: "\n")))
    }
}
