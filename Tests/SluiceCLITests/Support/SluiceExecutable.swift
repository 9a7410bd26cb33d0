import Foundation
import SluiceTesting
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Finds the built `sluice` executable: next to the test bundle (SwiftPM puts every product of a build
/// in the same folder), walking up from the bundle's folder and from `argv[0]`'s folder.
/// `SLUICE_BINARY=/path/to/sluice` overrides the search.
enum SluiceExecutable {
    static let name = "sluice"

    /// The executable, or an error that says how to build it.
    static func url() throws -> URL {
        try located.get()
    }

    private static let located: Result<URL, LocateError> = {
        if let explicit = ProcessInfo.processInfo.environment["SLUICE_BINARY"], !explicit.isEmpty {
            let url = URL(fileURLWithPath: explicit)
            return isExecutable(url) ? .success(url) : .failure(LocateError(searched: [explicit]))
        }
        var starts: [URL] = [Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()]
        if let first = CommandLine.arguments.first {
            starts.append(URL(fileURLWithPath: first).standardizedFileURL.deletingLastPathComponent())
        }
        var searched: [String] = []
        for start in starts {
            var directory = start.standardizedFileURL
            while true {
                let candidate = directory.appendingPathComponent(name)
                searched.append(candidate.path)
                if isExecutable(candidate) { return .success(candidate) }
                let parent = directory.deletingLastPathComponent()
                if parent.path == directory.path { break }
                directory = parent
            }
        }
        return .failure(LocateError(searched: searched))
    }()

    private static func isExecutable(_ url: URL) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory)
            && !isDirectory.boolValue && FileManager.default.isExecutableFile(atPath: url.path)
    }

    struct LocateError: Error, CustomStringConvertible {
        var searched: [String]
        var description: String {
            """
            the `sluice` executable was not found next to the test bundle. Build it first:
                swift build --scratch-path .build-cli --product sluice
            (or set SLUICE_BINARY=/path/to/sluice). Looked at:
            \(searched.prefix(12).map { "    " + $0 }.joined(separator: "\n"))
            """
        }
    }
}

/// What a finished `sluice` process left behind.
struct CommandResult: Sendable, CustomStringConvertible {
    var arguments: [String]
    /// The exit status, or the signal number when `signaled`.
    var status: Int32
    var signaled: Bool
    var stdout: String
    var stderr: String
    var seconds: Double

    /// The exit code, or nil if the process died of a signal.
    var exitCode: Int32? { signaled ? nil : status }

    var description: String {
        let how = signaled ? "killed by signal \(status)" : "exit \(status)"
        return
            "sluice \(arguments.joined(separator: " ")) → \(how) after \(String(format: "%.2f", seconds)) s\n--- stderr (tail) ---\n\(stderr.suffix(2000))\n--- stdout (tail) ---\n\(stdout.suffix(1000))"
    }
}

struct TimedOut: Error, CustomStringConvertible {
    var what: String
    var description: String { "timed out: \(what)" }
}

/// A `sluice` subprocess. Standard output and error go to files (no pipe can fill up and stall the
/// child), read back when asked. Started through ``SpawnedChild`` (one close action whatever the number of
/// descriptors open, nothing left in the test process); a child dropped while it runs is killed.
final class SluiceProcess: @unchecked Sendable {
    let arguments: [String]
    let stdoutURL: URL
    let stderrURL: URL
    private let child: SpawnedChild
    private let started = ContinuousClock.now

    /// Starts `sluice ARGUMENTS` in `directory`, with `environment` added to (or, for nil values, removed
    /// from) the test's own environment; `executable` replaces the built `sluice`.
    init(
        _ arguments: [String],
        in directory: URL,
        environment: [String: String?] = [:],
        outputs: URL,
        executable: URL? = nil
    ) throws {
        self.arguments = arguments
        let tag = "\(ProcessInfo.processInfo.processIdentifier)-\(Self.nextTag())"
        stdoutURL = outputs.appendingPathComponent("cmd-\(tag).stdout")
        stderrURL = outputs.appendingPathComponent("cmd-\(tag).stderr")
        _ = FileManager.default.createFile(atPath: stdoutURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
        var env = ProcessInfo.processInfo.environment
        env["SLUICE_EMBED_AUDIT_LOG"] = nil
        for (key, value) in environment { env[key] = value }
        let path = try (executable ?? SluiceExecutable.url()).path
        let input = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/dev/null"))
        let out = try FileHandle(forWritingTo: stdoutURL)
        let err = try FileHandle(forWritingTo: stderrURL)
        defer {
            try? input.close()
            try? out.close()
            try? err.close()
        }
        child = try SpawnedChild(
            path,
            arguments,
            environment: env,
            directory: directory.path,
            input: input.fileDescriptor,
            output: out.fileDescriptor,
            error: err.fileDescriptor
        )
    }

    var pid: Int32 { child.pid }
    var isRunning: Bool { child.isRunning }
    var elapsedSeconds: Double { Self.seconds(started.duration(to: .now)) }

    /// Sends a signal (SIGKILL, SIGINT, …) to the child.
    func send(_ signal: Int32) {
        child.signal(signal)
    }

    /// What the child has written to standard error so far.
    var stderrSoFar: String { (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? "" }

    /// Waits until standard error contains `text` (true), or the child exits or `timeout` passes (false).
    func waitForStderr(containing text: String, timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if stderrSoFar.contains(text) { return true }
            if !isRunning { return stderrSoFar.contains(text) }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return false
    }

    /// Waits for the child to end; past `timeout` it is killed and ``TimedOut`` thrown.
    func wait(timeout: Duration) async throws -> CommandResult {
        let deadline = ContinuousClock.now + timeout
        var exit = child.exit
        while exit == nil {
            if ContinuousClock.now >= deadline {
                child.signal(SIGKILL)
                child.wait()
                throw TimedOut(
                    what:
                        "sluice \(arguments.joined(separator: " ")) still running after \(timeout)\n\(stderrSoFar.suffix(2000))"
                )
            }
            try? await Task.sleep(for: .milliseconds(5))
            exit = child.exit
        }
        let seconds = elapsedSeconds
        return CommandResult(
            arguments: arguments,
            status: exit!.status,
            signaled: exit!.signaled,
            stdout: (try? String(contentsOf: stdoutURL, encoding: .utf8)) ?? "",
            stderr: stderrSoFar,
            seconds: seconds
        )
    }

    private static let counter = Counter()
    private static func nextTag() -> Int { counter.next() }

    static func seconds(_ duration: Duration) -> Double {
        let parts = duration.components
        return Double(parts.seconds) + Double(parts.attoseconds) * 1e-18
    }

    private final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var value = 0
        func next() -> Int {
            lock.lock()
            defer { lock.unlock() }
            value += 1
            return value
        }
    }
}
