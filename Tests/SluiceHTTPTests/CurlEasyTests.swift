import Foundation
import SluiceCore
import SluiceHTTP
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct CurlEasyTests {
    @Test func versionStringNamesLibcurl() {
        #expect(CurlEasy.versionString.hasPrefix("libcurl/"))
    }

    @Test func getFileURLReturnsTheFileBytes() throws {
        let directory = try TemporaryDirectory()
        let bytes: [UInt8] = Array("hello from a file\n".utf8) + (0..<256).map { UInt8($0) }
        let file = directory.url.appendingPathComponent("body.bin")
        try Data(bytes).write(to: file)

        let response = try CurlEasy().get(file.absoluteString)
        #expect(response.status == 0)
        #expect(response.body == bytes)
    }

    @Test func missingFileIsAnError() throws {
        let directory = try TemporaryDirectory()
        let error = #expect(throws: SluiceError.self) {
            try CurlEasy().get(directory.url.appendingPathComponent("missing.txt").absoluteString)
        }
        #expect(error?.code == .io)
    }

    @Test func bodyOverTheLimitIsTooLarge() throws {
        let directory = try TemporaryDirectory()
        let file = directory.url.appendingPathComponent("big.txt")
        try Data(repeating: 0x61, count: 10_000).write(to: file)
        let error = #expect(throws: SluiceError.self) {
            try CurlEasy().get(file.absoluteString, maxBodyBytes: 1_000)
        }
        #expect(error?.code == .tooLarge)
    }

    @Test func unsupportedSchemeIsAnError() {
        let error = #expect(throws: SluiceError.self) {
            try CurlEasy().get("gopher://127.0.0.1/")
        }
        #expect(error?.code == .io)
    }

    @Test func getFromLoopbackServer() throws {
        let directory = try TemporaryDirectory()
        let text = "served over loopback HTTP\n"
        try Data(text.utf8).write(to: directory.url.appendingPathComponent("hello.txt"))
        let server = try LoopbackHTTPServer(serving: directory.url)
        defer { server.stop() }

        let curl = try CurlEasy()
        let ok = try curl.get("http://127.0.0.1:\(server.port)/hello.txt")
        #expect(ok.status == 200)
        #expect(ok.body == Array(text.utf8))

        // The same handle serves the next request; a 404 is a response, not an error.
        let missing = try curl.get("http://127.0.0.1:\(server.port)/nope.txt")
        #expect(missing.status == 404)
    }

    @Test func refusedConnectionIsAnIOError() throws {
        let port = try freeLoopbackPort()
        let error = #expect(throws: SluiceError.self) {
            try CurlEasy().get("http://127.0.0.1:\(port)/", connectTimeout: .seconds(2), timeout: .seconds(5))
        }
        #expect(error?.code == .io)
    }
}

/// A directory under the system temporary folder, removed when the value is released.
private final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-curl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}

/// `python3 -m http.server` on 127.0.0.1 and a free port, serving one directory.
private final class LoopbackHTTPServer {
    let port: Int
    private let process: Process

    init(serving directory: URL) throws {
        port = try freeLoopbackPort()
        process = Process()
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            process.arguments = []
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3"]
        }
        process.arguments! += ["-m", "http.server", String(port), "--bind", "127.0.0.1", "--directory", directory.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()

        do {
            try waitUntilAnswering(within: 15)
        } catch {
            stop()
            throw error
        }
    }

    /// Polls until the server answers a GET (any status).
    private func waitUntilAnswering(within seconds: TimeInterval) throws {
        let deadline = Date().addingTimeInterval(seconds)
        let probe = try CurlEasy()
        while (try? probe.get("http://127.0.0.1:\(port)/", connectTimeout: .seconds(1), timeout: .seconds(2))) == nil {
            guard process.isRunning, Date() < deadline else {
                throw SluiceError(.io, "python3 http.server did not answer on port \(port)")
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
    }

    /// Kills the server with SIGKILL: a child that Foundation's `Process` spawns from a dispatch worker
    /// thread inherits that thread's blocked signal mask, SIGTERM included, so `terminate()` would not
    /// stop it and `waitUntilExit()` would hang.
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
    }
}

/// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, read back, closed).
private func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw SluiceError(.io, "socket() failed: errno \(errno)") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
            bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
        }
    }
    guard bound else { throw SluiceError(.io, "bind() failed: errno \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
}
