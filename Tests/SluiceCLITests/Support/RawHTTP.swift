import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One TCP connection to a local server, written and read byte by byte: what URLSession will not send
/// (a foreign `Host`, a half-sent body, a connection that stays idle) and what it hides (the raw answer).
/// Every read has a deadline (a guard against hangs, never a measure of speed); the blocking calls run on a
/// thread of their own, off the cooperative pool.
final class RawHTTP: @unchecked Sendable {
    let descriptor: Int32

    struct Answer: Sendable, CustomStringConvertible {
        var status: Int
        /// Lower-cased names.
        var headers: [String: String]
        var body: Data
        var text: String { String(decoding: body, as: UTF8.self) }
        var errorCode: String? { ServeProcess.errorCode(body) }
        var description: String { "\(status) \(headers) \(text.prefix(500))" }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Connects to `127.0.0.1:port`.
    init(port: Int) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw Failure(description: "connect: \(reason)")
        }
        descriptor = fd
    }

    deinit { close(descriptor) }

    /// Writes `bytes` (all of them, or throws).
    func send(_ bytes: Data) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                Glibc.send(descriptor, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            guard written > 0 else { throw Failure(description: "send: \(String(cString: strerror(errno)))") }
            offset += written
        }
    }

    func send(_ text: String) throws { try send(Data(text.utf8)) }

    /// A request as a browser or a script would write it: `Host` first (nil: none at all), then `headers`,
    /// `Content-Length` when there is a body.
    static func request(
        _ method: String,
        _ path: String,
        host: String?,
        headers: [(String, String)] = [],
        body: Data? = nil
    ) -> Data {
        var head = "\(method) \(path) HTTP/1.1\r\n"
        if let host { head += "Host: \(host)\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\n" }
        head += "Connection: close\r\n\r\n"
        return Data(head.utf8) + (body ?? Data())
    }

    /// Reads until the peer closes (the requests above ask it to), under `timeout`: the answer, or nil
    /// when the server closed without one.
    func readAnswer(timeout: Duration = .seconds(60)) async throws -> Answer? {
        let data = try await readUntilClosed(timeout: timeout)
        guard !data.isEmpty else { return nil }
        return try Self.parse(data)
    }

    /// Everything until the peer closes; throws when `timeout` passes first.
    func readUntilClosed(timeout: Duration) async throws -> Data {
        let fd = descriptor
        return try await Self.offPool {
            let deadline = ContinuousClock.now + timeout
            var data = Data()
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let left = ContinuousClock.now.duration(to: deadline)
                guard left > .zero else { throw Failure(description: "no close within \(timeout)") }
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let milliseconds = Int32(min(left.components.seconds * 1000 + 1, 1000))
                let ready = poll(&poller, 1, milliseconds)
                if ready == 0 { continue }
                guard ready > 0 else { throw Failure(description: "poll: \(String(cString: strerror(errno)))") }
                let count = recv(fd, &buffer, buffer.count, 0)
                if count == 0 { return data }
                if count < 0 {
                    if errno == ECONNRESET { return data }
                    throw Failure(description: "recv: \(String(cString: strerror(errno)))")
                }
                data.append(contentsOf: buffer[0..<count])
            }
        }
    }

    static func parse(_ data: Data) throws -> Answer {
        guard let end = data.range(of: Data("\r\n\r\n".utf8)) else {
            throw Failure(description: "no header end in \(String(decoding: data.prefix(300), as: UTF8.self))")
        }
        let head = String(decoding: data[data.startIndex..<end.lowerBound], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw Failure(description: "bad status line: \(head.prefix(100))")
        }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces
            )
        }
        var body = Data(data[end.upperBound...])
        if headers["transfer-encoding"]?.lowercased() == "chunked" { body = dechunk(body) }
        return Answer(status: status, headers: headers, body: body)
    }

    private static func dechunk(_ data: Data) -> Data {
        var out = Data()
        var rest = data[...]
        while let lineEnd = rest.range(of: Data("\r\n".utf8)) {
            let size = Int(String(decoding: rest[rest.startIndex..<lineEnd.lowerBound], as: UTF8.self), radix: 16) ?? 0
            if size == 0 { break }
            let start = lineEnd.upperBound
            guard rest.distance(from: start, to: rest.endIndex) >= size else { break }
            let stop = rest.index(start, offsetBy: size)
            out.append(rest[start..<stop])
            rest = rest[stop...].dropFirst(2)
        }
        return out
    }

    /// Runs a blocking call on a thread of its own.
    static func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    /// A new connection with a JSON POST to /v1/search whose head says `length` bytes of body and which has
    /// sent only `first` of them: the rest is the test's to trickle, or never to send.
    static func openBody(port: Int, length: Int, first: String = "") throws -> RawHTTP {
        let connection = try RawHTTP(port: port)
        try connection.send(
            "POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(length)\r\n\r\n\(first)"
        )
        return connection
    }

    /// One whole exchange on a new connection.
    static func exchange(
        port: Int,
        _ method: String,
        _ path: String,
        host: String?,
        headers: [(String, String)] = [],
        body: Data? = nil
    ) async throws -> Answer {
        let connection = try RawHTTP(port: port)
        try connection.send(request(method, path, host: host, headers: headers, body: body))
        guard let answer = try await connection.readAnswer() else {
            throw Failure(description: "\(method) \(path): the server closed without an answer")
        }
        return answer
    }
}
