import Foundation
import SluiceCore
import Synchronization

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
        /// What to start instead once `executable` proves to be from another build of Sluice (its hello
        /// reports another `ExtractWorkerProtocol/compatibility`), or nil to fail its jobs then.
        public var fallback: Fallback?

        /// A worker program known to be of this build (`sluice`'s own subcommand).
        public struct Fallback: Sendable, Hashable {
            public var executable: String
            public var arguments: [String]

            public init(executable: String, arguments: [String]) {
                self.executable = executable
                self.arguments = arguments
            }
        }

        public init(executable: String, arguments: [String], fallback: Fallback? = nil) {
            self.executable = executable
            self.arguments = arguments
            self.fallback = fallback
        }
    }

    public let command: Command
    public let size: Int
    private let state: PoolState

    /// - Parameters:
    ///   - command: The worker program; the options are appended as one JSON argument.
    ///   - options: The extraction settings every worker runs with.
    ///   - size: The number of worker processes (`extract.parallelism`).
    ///   - notice: Told once, in words for the user, when the pool turns to `command`'s fallback.
    package init(
        command: Command,
        options: ExtractWorkerProtocol.Options,
        size: Int,
        notice: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        precondition(size > 0, "a worker pool needs at least one worker")
        // A write to a worker that just died must fail with EPIPE, not kill this process.
        signal(SIGPIPE, SIG_IGN)
        var options = options
        options.openDocuments = max(options.openDocuments, size)
        let optionsJSON = String(decoding: (try? JSONEncoder().encode(options)) ?? Data("{}".utf8), as: UTF8.self)
        // An allow-list, not the parent's environment: no secret reaches the processes that parse untrusted
        // files. The PDF password's variable is the one secret a worker needs.
        let environment = WorkerProcess.workerEnvironment(
            ProcessInfo.processInfo.environment,
            passing: [options.pdf.passwordEnvironmentVariable].compactMap { $0 }
        )
        var worker = Command(executable: command.executable, arguments: command.arguments + [optionsJSON])
        worker.environment = environment
        worker.fallback = command.fallback.map {
            .init(executable: $0.executable, arguments: $0.arguments + [optionsJSON])
        }
        self.command = worker
        self.size = size
        self.state = PoolState(notice: notice)
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
    ///   `timeout`); the other requests of the set are then dropped (those still queued are taken out of
    ///   the queue, those running are finished and their answers ignored).
    func run(
        _ requests: [ExtractWorkerProtocol.Request],
        deadline: ContinuousClock.Instant
    ) throws -> [ExtractWorkerProtocol.Response] {
        let batch = Batch(count: requests.count)
        var queued: [BlockingQueue<Job>.Ticket] = []
        for (index, request) in requests.enumerated() {
            if let ticket = state.jobs.append(Job(request: request, index: index, deadline: deadline, batch: batch)) {
                queued.append(ticket)
            } else {
                batch.complete(
                    index,
                    with: .failure(SluiceError(.extractionFailed, "the extract worker pool is shut down"))
                )
            }
        }
        // Whatever the outcome, no job of this call stays queued for a driver to skip.
        defer { for ticket in queued { _ = state.jobs.remove(ticket) } }
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

/// The answers of one call, queued by the drivers as they come; the caller waits for all of them or
/// the first failure, then closes the queue (abandons the call): later answers are dropped and the
/// drivers skip its jobs.
final class Batch: Sendable {
    private let answers = BlockingQueue<(index: Int, result: Result<ExtractWorkerProtocol.Response, SluiceError>)>()
    private let count: Int

    init(count: Int) { self.count = count }

    var isAbandoned: Bool { answers.isClosed }

    func complete(_ index: Int, with result: Result<ExtractWorkerProtocol.Response, SluiceError>) {
        answers.append((index, result))
        // The first failure abandons the call at once: drivers skip its other jobs (the caller still
        // takes the failure, which was queued before the close).
        if case .failure = result { answers.close() }
    }

    func wait(until deadline: ContinuousClock.Instant) throws -> [ExtractWorkerProtocol.Response] {
        defer { answers.close() }
        var responses = [ExtractWorkerProtocol.Response?](repeating: nil, count: count)
        var remaining = count
        while remaining > 0 {
            switch answers.take(before: deadline) {
            case .element(let answer):
                responses[answer.index] = try answer.result.get()
                remaining -= 1
            case .timedOut, .closed:
                throw SluiceError(
                    .timeout,
                    "extraction did not finish in time (all extract workers busy; extract.timeout_seconds)"
                )
            }
        }
        return responses.map { $0! }
    }
}

/// The job queue shared by the drivers, their count, and whether they start the fallback program.
final class PoolState: Sendable {
    let jobs = BlockingQueue<Job>()
    /// Drivers that exited, announced one each.
    private let exits = BlockingQueue<Void>()
    private let lastID = Atomic<Int>(0)
    private let exitsSeen = Mutex(0)
    private let fallingBack = Atomic<Bool>(false)
    private let notice: @Sendable (String) -> Void

    init(notice: @escaping @Sendable (String) -> Void = { _ in }) { self.notice = notice }

    /// Whether workers are started from the command's fallback (once one proved to be of another build).
    var usesFallback: Bool { fallingBack.load(ordering: .acquiring) }

    /// Turns every driver to the fallback; the first call tells the user `why`.
    func fallBack(because why: @autoclosure () -> String) {
        if fallingBack.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged {
            notice(why())
        }
    }

    func nextID() -> Int { lastID.add(1, ordering: .relaxed).newValue }

    /// The next job, or nil once the pool is stopping and the queue is empty.
    func take() -> Job? { jobs.take() }

    func shutdown() { jobs.close() }

    func driverExited() { exits.append(()) }

    func waitUntilDriversExit(count: Int) {
        // One waiter at a time; a second call after all exited returns at once.
        exitsSeen.withLock { seen in
            while seen < count, exits.take() != nil { seen += 1 }
        }
    }
}
