import Synchronization

/// Asks a running pipeline to stop taking new documents; what is in flight finishes and is committed.
///
/// Waits that only pass time — retry backoff, rate-limit pauses — do not hold a stopping run up: they go
/// through ``pause(for:)``, which ends at once when the signal of the current run (``current``, bound by
/// the pipeline for every task of the run, as ServiceLifecycle binds its graceful-shutdown manager) is
/// requested.
public final class ShutdownSignal: Sendable {
    private struct State {
        var requested = false
        var nextWaiter: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        /// Waiters cancelled before they were registered.
        var cancelled: Set<UInt64> = []
    }

    private let state = Mutex(State())

    public init() {}

    /// The signal of the run the current task works for, if any.
    @TaskLocal public static var current: ShutdownSignal?

    /// Requests the stop; every wait in ``pause(for:)`` ends.
    public func request() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.requested = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    public var isRequested: Bool { state.withLock { $0.requested } }

    /// Sleeps for `duration`, unless the current run's signal is requested first (or already was).
    ///
    /// - Throws: ``SluiceError/Code/interrupted`` when the wait was cut short; `CancellationError` when
    ///   the task is cancelled.
    public static func pause(for duration: Duration) async throws {
        guard let signal = current else { return try await Task.sleep(for: duration) }
        try await signal.sleep(for: duration)
    }

    /// Sleeps for `duration`, unless this signal is requested first (or already was).
    ///
    /// - Throws: ``SluiceError/Code/interrupted`` when the wait was cut short; `CancellationError` when
    ///   the task is cancelled.
    public func sleep(for duration: Duration) async throws {
        let slept = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await Task.sleep(for: duration)
                return true
            }
            group.addTask {
                await self.requested()
                return false
            }
            defer { group.cancelAll() }
            return try await group.next() ?? false
        }
        if !slept {
            throw SluiceError(
                .interrupted,
                "a wait (retry backoff or rate-limit pause) was cut short: the run is stopping"
            )
        }
    }

    /// Returns once the signal is requested (at once if it already was), or the task is cancelled.
    package func requested() async {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.requested || state.cancelled.remove(id) != nil { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let waiter = state.waiters.removeValue(forKey: id) else {
                    if !state.requested { state.cancelled.insert(id) }
                    return nil
                }
                return waiter
            }
            waiter?.resume()
        }
    }
}
