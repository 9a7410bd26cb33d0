import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import SluiceCore
import SluicePipeline
import SluiceState
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Starts incremental runs in the background and keeps their progress (`POST /v1/runs`,
/// `GET /v1/runs/{id}`).
///
/// A run is a child `sluice run` process, not a pipeline inside the server: LMDB must not be opened twice
/// in one process (the server holds the store and the checkpoint open for reading), and the child is
/// exactly what cron runs, with the same exit codes. One run at a time: the state lock decides, so a run
/// of this server or of a cron `sluice run` already going answers 409. A service of the server's group: on
/// SIGTERM/SIGINT it passes SIGINT to the child (documents in flight finish and are committed, as `sluice
/// run` does on a signal) and waits for it.
final class RunManager: Service, Sendable {
    /// The child's command line; `--progress-json FILE` is appended.
    struct Command: Sendable {
        var executable: String
        var arguments: [String]
    }

    private struct Current {
        var id: String
        var process: Process
        var progressFile: URL
    }

    private struct State {
        var reports: [String: RunProgressReport] = [:]
        var progressFiles: [String: URL] = [:]
        var order: [String] = []
        var current: Current?
        var stopping = false
        var interrupted = false
        var sequence = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
        /// The private folder of the progress files (``ScratchFolder``), made at the first run.
        var scratch: URL?
    }

    /// How many runs are remembered.
    static let kept = 50

    private let state = Mutex(State())
    private let checkpoint: CheckpointReader
    private var stateDirectory: URL { checkpoint.directory }
    private let command: Command
    private let metrics: ServeMetrics
    private let logger: Logger

    init(checkpoint: CheckpointReader, command: Command, metrics: ServeMetrics, logger: Logger) {
        self.checkpoint = checkpoint
        self.command = command
        self.metrics = metrics
        self.logger = logger
    }

    /// Whether a run was stopped by the server's shutdown (the process then exits 4, as `run` does).
    var interruptedRun: Bool { state.withLock { $0.interrupted } }

    /// A run's report, with the progress its child wrote last.
    func report(_ id: String) -> RunProgressReport? {
        guard
            case (var report, let file)? = state.withLock({ state in
                state.reports[id].map { ($0, state.progressFiles[id]) }
            })
        else { return nil }
        if let file, let progress = RunProgressFile.read(file) {
            report.elapsedSeconds = progress.elapsedSeconds
            report.documentsDone = progress.documentsDone
            report.documentsTotal = progress.documentsTotal
            report.stats = progress.stats
        }
        return report
    }

    /// Starts a run.
    /// - Throws: ``APIError`` 409 when a run holds the state lock (with `run_id`: the run's id, or null when
    ///   the holder has not recorded one yet), 503 while the server stops, 503 `state-corrupt` (with how to
    ///   recover) when the state is damaged: the run would refuse it (exit 1), so none is started.
    func start() throws -> RunProgressReport {
        _ = try checkpoint.openIfPresent()
        let (id, scratch) = try state.withLock { state -> (String, URL) in
            if state.stopping { throw APIError(.serviceUnavailable, "stopping", "the server is stopping") }
            if let current = state.current { throw Self.lockHeld(runID: current.id) }
            if state.scratch == nil { state.scratch = try ScratchFolder.make() }
            state.sequence += 1
            return ("\(Int(Date().timeIntervalSince1970))-\(state.sequence)", state.scratch!)
        }
        // A run of another process (cron's `sluice run`): the lock tells, at once. One that takes the lock
        // between this probe and the child's start makes the child exit 3: its report says `lock-held`.
        do {
            let probe = try StateLock(directory: stateDirectory)
            withExtendedLifetime(probe) {}
        } catch let error as SluiceError where error.code == .lockHeld {
            logger.info("run refused: \(error.message)")
            throw Self.lockHeld(runID: runningRunID(), other: true)
        }
        let progressFile = scratch.appendingPathComponent("\(id).json")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command.executable)
        process.arguments = command.arguments + ["--progress-json", progressFile.path]
        let report = RunProgressReport(id: id, state: "running", startedAt: Date().timeIntervalSince1970)
        try state.withLock { state in
            if let current = state.current { throw Self.lockHeld(runID: current.id) }
            process.terminationHandler = { [self] process in
                finished(
                    id: id,
                    status: process.terminationStatus,
                    signalled: process.terminationReason == .uncaughtSignal
                )
            }
            do {
                try process.run()
            } catch {
                throw SluiceError(.dependencyUnavailable, "cannot start `sluice run`: \(error.localizedDescription)")
            }
            state.reports[id] = report
            state.progressFiles[id] = progressFile
            state.order.append(id)
            state.current = Current(id: id, process: process, progressFile: progressFile)
            while state.order.count > Self.kept, let oldest = state.order.first {
                state.order.removeFirst()
                state.reports[oldest] = nil
                if let file = state.progressFiles.removeValue(forKey: oldest) {
                    try? FileManager.default.removeItem(at: file)
                }
            }
        }
        metrics.recordRunStarted()
        logger.info("run started", metadata: ["sluice-run": "\(id)"])
        return report
    }

    /// The 409 of a run already going: always with `run_id` (null when another process holds the lock and
    /// has not recorded its run yet), and never the state folder's path.
    static func lockHeld(runID: String?, other: Bool = false) -> APIError {
        APIError(
            .conflict,
            SluiceError.Code.lockHeld.rawValue,
            other ? "another process's run holds the state lock" : "a run of this server is going",
            details: ["run_id": runID]
        )
    }

    /// - Parameter signalled: The child was killed by signal `status` (then it has no exit code).
    private func finished(id: String, status: Int32, signalled: Bool) {
        let code = RunExitCode(rawValue: status)
        let outcome = signalled ? RunProgressReport.killed : RunProgressReport.outcome(of: code)
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.reports[id]?.state = "finished"
            state.reports[id]?.endedAt = Date().timeIntervalSince1970
            state.reports[id]?.outcome = outcome
            if signalled {
                state.reports[id]?.signal = status
                state.reports[id]?.error = "`sluice run` was killed by signal \(status)\(Self.signalName(status))"
            } else {
                state.reports[id]?.exitCode = status
            }
            if !signalled && code == .interrupted { state.interrupted = true }
            state.current = nil
            defer { state.waiters = [] }
            return state.waiters
        }
        metrics.recordRunFinished(outcome: outcome)
        logger.info("run finished", metadata: ["sluice-run": "\(id)", "sluice-outcome": "\(outcome)"])
        for waiter in waiters { waiter.resume() }
    }

    /// ` (SIGKILL)` for the usual signals, else nothing.
    static func signalName(_ signal: Int32) -> String {
        let names: [Int32: String] = [
            SIGKILL: "SIGKILL", SIGTERM: "SIGTERM", SIGINT: "SIGINT", SIGSEGV: "SIGSEGV", SIGABRT: "SIGABRT",
            SIGBUS: "SIGBUS", SIGILL: "SIGILL", SIGHUP: "SIGHUP",
        ]
        return names[signal].map { " (\($0))" } ?? ""
    }

    /// The id of the run the checkpoint says is going (started, not ended), if it can be read.
    ///
    /// Only the 409 of a run that holds the lock asks: the lock, not this record, says a run is going, so a
    /// state that cannot be read leaves the answer a 409 with `run_id` null ("not recorded"), and the
    /// failure goes to the log (`/ready` reports it as the state's condition).
    private func runningRunID() -> String? {
        do {
            guard let latest = try checkpoint.openIfPresent()?.recentRuns(limit: 1).first, latest.endedAt == nil
            else { return nil }
            return latest.runID
        } catch {
            let message = (error as? APIError)?.message ?? (error as? SluiceError)?.message ?? "\(error)"
            logger.warning("the running run's id is unknown: the state cannot be read: \(message)")
            return nil
        }
    }

    /// Waits for the server's graceful shutdown, then stops the running run as `sluice run` stops on a
    /// signal (documents in flight finish and are committed) and waits for it.
    func run() async throws {
        try? await gracefulShutdown()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let process = state.withLock { state -> Process? in
                state.stopping = true
                guard let current = state.current else { return nil }
                state.waiters.append(continuation)
                return current.process
            }
            guard let process else { return continuation.resume() }
            logger.notice("stopping: the running run finishes its documents in flight, then stops")
            kill(process.processIdentifier, SIGINT)
        }
        if let scratch = state.withLock({ $0.scratch }) { try? FileManager.default.removeItem(at: scratch) }
    }
}
