import Foundation
import SluiceCore

#if canImport(Glibc)
import Glibc
#endif

/// Supervised extract worker processes: PDF and OCR work runs in them, so that a crash in C code
/// (poppler on a malicious file) or a hung call fails only the document it was working on.
///
/// The pool starts up to `size` processes of ``Command`` (`sluice extract-worker`), lazily, each driven
/// by a dedicated thread of this pool. Jobs (a PDF's info, a range of its pages, an image) queue in
/// order and go to the next free worker, so the pages of one large document spread over all workers.
/// A worker that dies (a signal, an exit) or passes its job's deadline is killed (SIGKILL), reaped and
/// replaced on the next job; the job fails with ``SluiceError/Code/extractorCrashed`` or
/// ``SluiceError/Code/timeout``.
public final class ExtractWorkerPool: Sendable {
    /// How to start a worker: the `sluice` binary and its hidden subcommand.
    public struct Command: Sendable, Hashable {
        public var executable: String
        public var arguments: [String]
        /// The worker's whole environment (the pool sets it: see `WorkerProcess.workerEnvironment`).
        var environment: [String: String] = [:]

        public init(executable: String, arguments: [String]) {
            self.executable = executable
            self.arguments = arguments
        }
    }

    public let command: Command
    public let size: Int
    private let state: PoolState

    /// - Parameters:
    ///   - command: The worker program; the options are appended as one JSON argument.
    ///   - options: The extraction settings every worker runs with.
    ///   - size: The number of worker processes (`extract.parallelism`).
    public init(command: Command, options: ExtractWorkerProtocol.Options, size: Int) {
        precondition(size > 0, "a worker pool needs at least one worker")
        // A write to a worker that just died must fail with EPIPE, not kill this process.
        signal(SIGPIPE, SIG_IGN)
        var options = options
        options.openDocuments = max(options.openDocuments, size)
        let optionsJSON = String(decoding: (try? JSONEncoder().encode(options)) ?? Data("{}".utf8), as: UTF8.self)
        var worker = Command(executable: command.executable, arguments: command.arguments + [optionsJSON])
        // An allow-list, not the parent's environment: no secret reaches the processes that parse untrusted
        // files. The PDF password's variable is the one secret a worker needs.
        worker.environment = WorkerProcess.workerEnvironment(
            ProcessInfo.processInfo.environment, passing: [options.pdf.passwordEnvironmentVariable].compactMap { $0 })
        self.command = worker
        self.size = size
        self.state = PoolState()
        for index in 0..<size {
            let state = self.state
            let command = self.command
            let thread = Thread {
                Thread.current.name = "sl-worker-\(index)"
                var driver = WorkerDriver(command: command, state: state)
                driver.run()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    deinit { state.shutdown() }

    /// Stops the workers once the queued jobs are done (their input is closed and they are reaped).
    public func shutdown() { state.shutdown() }

    /// Waits until every worker process has been reaped after ``shutdown()`` (for CPU accounting).
    public func waitUntilStopped() { state.waitUntilDriversExit(count: size) }

    /// Runs `requests` on the workers, in parallel where workers are free, and returns their responses
    /// in order. Blocks the calling thread.
    ///
    /// - Parameter deadline: When the whole set must be done; a worker still busy with it then is killed.
    /// - Throws: The first failure (``SluiceError`` as the worker reported it, `extractor-crashed`,
    ///   `timeout`); the other requests of the set are then dropped.
    func run(_ requests: [ExtractWorkerProtocol.Request], deadline: ContinuousClock.Instant) throws -> [ExtractWorkerProtocol.Response] {
        let batch = Batch(count: requests.count)
        for (index, request) in requests.enumerated() {
            state.enqueue(Job(request: request, index: index, deadline: deadline, batch: batch))
        }
        // Drivers enforce the deadline on running jobs; a job still queued then (all workers busy with
        // other documents) is dropped here, with a second of grace for the driver's own report.
        return try batch.wait(until: deadline + .seconds(1))
    }

    func nextRequestID() -> Int { state.nextID() }
}

/// One request of a ``ExtractWorkerPool/run(_:deadline:)`` call.
final class Job: Sendable {
    let request: ExtractWorkerProtocol.Request
    let index: Int
    let deadline: ContinuousClock.Instant
    let batch: Batch

    init(request: ExtractWorkerProtocol.Request, index: Int, deadline: ContinuousClock.Instant, batch: Batch) {
        self.request = request
        self.index = index
        self.deadline = deadline
        self.batch = batch
    }
}

/// The responses of one call, filled in by the drivers; the caller waits for all or the first failure.
final class Batch: @unchecked Sendable {
    // Guarded by `condition`.
    private let condition = NSCondition()
    private var responses: [ExtractWorkerProtocol.Response?]
    private var remaining: Int
    private var failure: SluiceError?

    init(count: Int) {
        responses = Array(repeating: nil, count: count)
        remaining = count
    }

    var isAbandoned: Bool { condition.withLock { failure != nil } }

    func complete(_ index: Int, with result: Result<ExtractWorkerProtocol.Response, SluiceError>) {
        condition.withLock {
            switch result {
            case .success(let response): responses[index] = response
            case .failure(let error): if failure == nil { failure = error }
            }
            remaining -= 1
            condition.broadcast()
        }
    }

    func wait(until deadline: ContinuousClock.Instant) throws -> [ExtractWorkerProtocol.Response] {
        condition.lock()
        defer { condition.unlock() }
        while remaining > 0 && failure == nil {
            let left = ContinuousClock.now.duration(to: deadline)
            if left <= .zero {
                failure = SluiceError(.timeout, "extraction did not finish in time (all extract workers busy; extract.timeout_seconds)")
                break
            }
            _ = condition.wait(until: Date(timeIntervalSinceNow: min(left.seconds, 1)))
        }
        if let failure { throw failure }
        return responses.map { $0! }
    }
}

/// The job queue shared by the drivers.
final class PoolState: @unchecked Sendable {
    // Guarded by `condition`.
    private let condition = NSCondition()
    private var queue: [Job] = []
    private var stopping = false
    private var exited = 0
    private var lastID = 0

    func nextID() -> Int {
        condition.withLock {
            lastID += 1
            return lastID
        }
    }

    func enqueue(_ job: Job) {
        condition.withLock {
            queue.append(job)
            condition.signal()
        }
    }

    /// The next job, or nil once the pool is stopping and the queue is empty.
    func take() -> Job? {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty && !stopping { condition.wait() }
        return queue.isEmpty ? nil : queue.removeFirst()
    }

    func shutdown() {
        condition.withLock {
            stopping = true
            condition.broadcast()
        }
    }

    func driverExited() {
        condition.withLock {
            exited += 1
            condition.broadcast()
        }
    }

    func waitUntilDriversExit(count: Int) {
        condition.withLock {
            while exited < count { condition.wait() }
        }
    }
}
