#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
    ///
    /// Works a chunk at a time: line ends are found with `memchr`, and a line wholly inside the chunk is
    /// read where it lies; only the part of a line a chunk ends in is kept for the next one. A chunk of a
    /// megabyte costs a few `memchr` calls per line, not a step per byte.
    package mutating func feed(_ bytes: some Collection<UInt8>) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        let contiguous: Bool? = bytes.withContiguousStorageIfAvailable { buffer in
            feed(buffer, into: &events)
            return true
        }
        if contiguous == nil { Array(bytes).withUnsafeBufferPointer { feed($0, into: &events) } }
        return events
    }

    private mutating func feed(_ buffer: UnsafeBufferPointer<UInt8>, into events: inout [ServerSentEvent]) {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return }
        let count = buffer.count
        var index = 0
        if afterCarriageReturn {
            afterCarriageReturn = false
            if base[0] == UInt8(ascii: "\n") { index = 1 }
        }
        while index < count {
            let rest = count - index
            let lineFeed = memchr(base + index, Int32(UInt8(ascii: "\n")), rest).map {
                base.distance(to: $0.assumingMemoryBound(to: UInt8.self))
            }
            let searched = (lineFeed ?? count) - index
            let carriageReturn = memchr(base + index, Int32(UInt8(ascii: "\r")), searched).map {
                base.distance(to: $0.assumingMemoryBound(to: UInt8.self))
            }
            guard let end = carriageReturn ?? lineFeed else {
                // No line end in the rest of the chunk: the start of a line the next chunk goes on with.
                line.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[index..<count]))
                return
            }
            let segment = UnsafeBufferPointer(rebasing: buffer[index..<end])
            if line.isEmpty {
                endLine(segment, into: &events)
            } else {
                line.append(contentsOf: segment)
                var whole: [UInt8] = []
                swap(&whole, &line)
                whole.withUnsafeBufferPointer { endLine($0, into: &events) }
                whole.removeAll(keepingCapacity: true)
                swap(&whole, &line)
            }
            index = end + 1
            if carriageReturn != nil {
                // "\r\n" is one line end, also when the "\n" starts the next chunk.
                if index < count {
                    if base[index] == UInt8(ascii: "\n") { index += 1 }
                } else {
                    afterCarriageReturn = true
                }
            }
        }
    }

    /// The last event, when the stream ended in the middle of it (nothing when it ended cleanly).
    package mutating func finish() -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        if !line.isEmpty {
            var whole: [UInt8] = []
            swap(&whole, &line)
            whole.withUnsafeBufferPointer { endLine($0, into: &events) }
        }
        dispatch(into: &events)
        return events
    }

    private mutating func endLine(_ content: UnsafeBufferPointer<UInt8>, into events: inout [ServerSentEvent]) {
        var bytes = content[...]
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
