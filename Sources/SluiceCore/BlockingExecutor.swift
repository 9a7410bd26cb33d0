import Foundation
import Synchronization

/// A pool of dedicated threads for blocking work (C libraries, file I/O, LMDB write transactions).
///
/// Swift's cooperative pool has one thread per core; a task that blocks one of them stalls every other
/// stage. Work submitted with ``run(_:)`` runs on one of this pool's own threads and resumes the caller
/// when done. The pool is a `Sendable` value owned by the component that created it (as NIO's
/// `FileSystem` owns its `NIOThreadPool`); ``shutdown()`` stops its threads once the queue is drained.
///
/// Cancellation, as NIO's `NIOThreadPool.runIfActive`: a caller cancelled while its work is still
/// queued gets `CancellationError` and the work never runs; work that has started runs to its end and
/// its caller gets the result (a write transaction is never left in doubt). After ``shutdown()`` work
/// is refused with an error, never run on the caller's thread.
public final class BlockingExecutor: Sendable {
    private let queue: BlockingQueue<@Sendable () -> Void>
    public let threadCount: Int
    public let label: String

    /// Starts `threads` threads named `label-N` (Linux keeps 15 bytes of a thread name: keep labels short).
    public init(label: String, threads: Int) {
        precondition(threads > 0, "a BlockingExecutor needs at least one thread")
        self.label = label
        self.threadCount = threads
        self.queue = BlockingQueue()
        for index in 0..<threads {
            let queue = self.queue
            let name = String("\(label)-\(index)".utf8.prefix(15))!
            // Named from inside: on Linux a name set before start() is not applied to the pthread.
            let thread = Thread {
                Thread.current.name = name
                BlockingExecutor.markCurrentThread(label)
                while let job = queue.take() { job() }
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    /// The label of the executor whose thread is running the caller, or nil on any other thread (Swift's
    /// cooperative pool included). Kept in a pthread key: thread names are not reliable on Linux (15 bytes,
    /// and a name can silently fail to apply).
    public static var currentLabel: String? {
        guard let pointer = pthread_getspecific(labelKey) else { return nil }
        return Unmanaged<NSString>.fromOpaque(pointer).takeUnretainedValue() as String
    }

    private static let labelKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    private static func markCurrentThread(_ label: String) {
        // Retained for the life of the process: an executor's threads live as long as it does.
        pthread_setspecific(labelKey, Unmanaged.passRetained(label as NSString).toOpaque())
    }

    /// Runs `body` on a pool thread and returns its result.
    /// - Throws: what `body` throws; `CancellationError` if the calling task is cancelled before `body`
    ///   started (it then never runs); ``SluiceError/Code/state`` if the executor is shut down.
    public func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await run(afterwards: nil, body)
    }

    /// ``run(_:)``, then `afterwards` on the same pool thread once `body` ended and its caller was resumed,
    /// before the thread takes other work: upkeep the caller must not wait for (a search's deferred memory
    /// release). `afterwards` does not run when `body` never ran.
    package func run<T: Sendable>(
        afterwards: (@Sendable () -> Void)?,
        _ body: @escaping @Sendable () throws -> T
    ) async throws -> T {
        let submission = Submission<T>()
        // The submitting stage's CPU meter, if any, gets the body's CPU time on the pool thread.
        let measured: @Sendable () throws -> T
        var upkeep: (@Sendable () -> Void)? = afterwards
        if let meter = WorkCPU.current {
            measured = { try meter.measuring(body) }
            if let afterwards { upkeep = { meter.measuring(afterwards) } }
        } else {
            measured = body
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                switch submission.enqueue(continuation, on: queue, measured, afterwards: upkeep) {
                case .queued: break
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .shutDown: continuation.resume(throwing: SluiceError(.state, "executor \(label) is shut down"))
                }
            }
        } onCancel: {
            submission.cancel(on: queue)
        }
    }

    /// Queues `body` to run on a pool thread and returns at once (``GroupCommit``'s drainer, which answers
    /// its callers itself). The submitting stage's CPU meter, if any, gets the body's CPU time.
    /// - Returns: false if the executor is shut down (`body` never runs).
    package func execute(_ body: @escaping @Sendable () -> Void) -> Bool {
        let measured: @Sendable () -> Void
        if let meter = WorkCPU.current {
            measured = { meter.measuring(body) }
        } else {
            measured = body
        }
        return queue.append(measured) != nil
    }

    /// Work queued and not yet started (for tests).
    var queuedCount: Int { queue.count }

    /// Lets the threads finish the queued work and exit; later ``run(_:)`` calls throw.
    public func shutdown() { queue.close() }

    deinit { queue.close() }
}

/// One call of ``BlockingExecutor/run(_:)``: decides, under its lock, whether the caller's cancellation
/// or a pool thread gets to the work first.
///
/// The job is appended to the queue outside that lock (a pool thread that takes it at once does not wait
/// for the submitter to finish appending): the state says `appending` until the queue's ticket is stored.
private final class Submission<T: Sendable>: Sendable {
    private enum State {
        case initial
        /// Being appended: a pool thread may start it already; a cancellation leaves the submitter to take
        /// it back out of the queue (only the submitter has the ticket).
        case appending(CheckedContinuation<T, any Error>)
        case queued(BlockingQueue<@Sendable () -> Void>.Ticket, CheckedContinuation<T, any Error>)
        case running
        case cancelled
    }

    /// `queued`: a pool thread or a cancellation resumes the caller; the others: the caller resumes itself.
    enum EnqueueResult { case queued, cancelled, shutDown }

    private let state = Mutex(State.initial)

    func enqueue(
        _ continuation: CheckedContinuation<T, any Error>,
        on queue: BlockingQueue<@Sendable () -> Void>,
        _ body: @escaping @Sendable () throws -> T,
        afterwards: (@Sendable () -> Void)?
    ) -> EnqueueResult {
        let proceeds = state.withLock { state in
            if case .cancelled = state { return false }
            state = .appending(continuation)
            return true
        }
        guard proceeds else { return .cancelled }
        let ticket = queue.append { [self] in
            guard let continuation = self.start() else { return }
            continuation.resume(with: Result { try body() })
            afterwards?()
        }
        let next: AfterAppend = state.withLock { state in
            switch state {
            case .appending(let continuation):
                guard let ticket else {
                    state = .cancelled  // final: a later cancellation has nothing to resume
                    return .shutDown
                }
                state = .queued(ticket, continuation)
                return .done
            case .cancelled:
                // Cancelled while appending: the caller is resumed; the job must not wait in the queue.
                return ticket.map { .takeBack($0) } ?? .done
            case .initial, .queued, .running:
                return .done  // .running: a pool thread took it already
            }
        }
        switch next {
        case .done: return .queued
        case .shutDown: return .shutDown
        case .takeBack(let ticket):
            _ = queue.remove(ticket)  // false when a pool thread took it: `start()` then finds it cancelled
            return .queued
        }
    }

    private enum AfterAppend {
        case done, shutDown
        case takeBack(BlockingQueue<@Sendable () -> Void>.Ticket)
    }

    /// On a pool thread: the caller to resume, or nil if the caller was cancelled first.
    private func start() -> CheckedContinuation<T, any Error>? {
        state.withLock { state in
            switch state {
            case .appending(let continuation), .queued(_, let continuation):
                state = .running
                return continuation
            case .initial, .running, .cancelled:
                return nil
            }
        }
    }

    func cancel(on queue: BlockingQueue<@Sendable () -> Void>) {
        let queued: (BlockingQueue<@Sendable () -> Void>.Ticket?, CheckedContinuation<T, any Error>)? = state.withLock {
            state in
            switch state {
            case .initial:
                state = .cancelled
                return nil
            case .appending(let continuation):
                state = .cancelled
                return (nil, continuation)
            case .queued(let ticket, let continuation):
                state = .cancelled
                return (ticket, continuation)
            case .running, .cancelled:
                return nil
            }
        }
        guard let (ticket, continuation) = queued else { return }
        if let ticket { _ = queue.remove(ticket) }
        continuation.resume(throwing: CancellationError())
    }
}
