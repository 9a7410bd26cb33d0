import Foundation
import SluiceCore

#if canImport(Glibc)
    import Glibc
#endif

/// A loopback test server run as a child process: a Python script under `scripts/stand-ins/` that binds
/// 127.0.0.1 on a port the OS picks and prints `PORT <n>` as its first line. Killed on ``stop()`` or
/// when the value is released.
public final class StandInServer: @unchecked Sendable {
    public let port: Int
    private let process: Process

    /// The repository root, from this file's path (Sources/SluiceTesting/StandInServer.swift).
    public static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Starts `scripts/stand-ins/<script>` with `arguments` and waits for its port line.
    public init(script: String, arguments: [String] = [], environment: [String: String]? = nil) throws {
        let path = Self.repositoryRoot.appendingPathComponent("scripts/stand-ins").appendingPathComponent(script).path
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-u", path] + arguments
        if let environment { process.environment = environment }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Reads the first line byte by byte (a blocking read on a test's thread, once per server).
        var line: [UInt8] = []
        let handle = output.fileHandleForReading
        while true {
            let byte = handle.readData(ofLength: 1)
            guard let first = byte.first else { break }
            if first == UInt8(ascii: "\n") { break }
            line.append(first)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("PORT "), let port = Int(text.dropFirst(5)) else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw SluiceError(.io, "stand-in \(script) did not report a port (got \(text.debugDescription))")
        }
        self.port = port
    }

    /// Starts the server from async code: the wait for its port line runs on a thread of its own, not on
    /// the cooperative pool (which has one thread per core).
    public static func launch(
        script: String, arguments: [String] = [], environment: [String: String]? = nil
    ) async throws -> StandInServer {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Result { try StandInServer(script: script, arguments: arguments, environment: environment) })
            }
            thread.start()
        }
    }

    deinit { stop() }

    /// `http://127.0.0.1:<port>`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Kills the server with SIGKILL (a child spawned from a dispatch thread may block SIGTERM).
    public func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
    }
}
