import Foundation

/// A pool of dedicated threads for blocking work (C libraries, file I/O, LMDB write transactions).
///
/// Swift's cooperative pool has one thread per core; a task that blocks one of them stalls every other
/// stage. Work submitted with ``run(_:)`` runs on one of this pool's own threads and resumes the caller
/// when done. The pool is a `Sendable` value owned by the component that created it (as NIO's
/// `FileSystem` owns its `NIOThreadPool`); ``shutdown()`` stops its threads once the queue is drained.
public final class BlockingExecutor: Sendable {
    private let state: Locked
    public let threadCount: Int
    public let label: String

    /// Starts `threads` threads named `label-N` (Linux keeps 15 bytes of a thread name: keep labels short).
    public init(label: String, threads: Int) {
        precondition(threads > 0, "a BlockingExecutor needs at least one thread")
        self.label = label
        self.threadCount = threads
        self.state = Locked()
        for index in 0..<threads {
            let state = self.state
            let name = String("\(label)-\(index)".utf8.prefix(15))!
            // Named from inside: on Linux a name set before start() is not applied to the pthread.
            let thread = Thread {
                Thread.current.name = name
                BlockingExecutor.markCurrentThread(label)
                state.workLoop()
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
    public func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let accepted = state.enqueue {
                continuation.resume(with: Result { try body() })
            }
            if !accepted {
                continuation.resume(throwing: SluiceError(.state, "executor \(label) is shut down"))
            }
        }
    }

    /// Runs a non-throwing `body` on a pool thread.
    public func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
            let accepted = state.enqueue { continuation.resume(returning: body()) }
            if !accepted { continuation.resume(returning: body()) }
        }
    }

    /// Lets the threads finish the queued work and exit.
    public func shutdown() { state.shutdown() }

    deinit { state.shutdown() }

    private final class Locked: @unchecked Sendable {
        // Guarded by `condition`.
        private let condition = NSCondition()
        private var queue: [(@Sendable () -> Void)?] = []
        private var head = 0
        private var stopping = false

        func enqueue(_ job: @escaping @Sendable () -> Void) -> Bool {
            condition.lock()
            defer { condition.unlock() }
            if stopping { return false }
            queue.append(job)
            condition.signal()
            return true
        }

        func shutdown() {
            condition.lock()
            stopping = true
            condition.broadcast()
            condition.unlock()
        }

        func workLoop() {
            while true {
                condition.lock()
                while head == queue.count && !stopping { condition.wait() }
                if head == queue.count {
                    condition.unlock()
                    return
                }
                // Take the job out of its slot: a finished job's closure holds its inputs and results
                // (file bytes, vectors), which must not outlive it.
                let job = queue[head]!
                queue[head] = nil
                head += 1
                if head == queue.count {
                    queue.removeAll(keepingCapacity: true)
                    head = 0
                } else if head > 1024 && head * 2 > queue.count {
                    queue.removeFirst(head)
                    head = 0
                }
                condition.unlock()
                job()
            }
        }
    }
}
