/// Asks a running pipeline to stop taking new documents; what is in flight finishes and is committed.
///
/// Waits that only pass time — retry backoff, rate-limit pauses — do not hold a stopping run up: they go
/// through ``pause(for:)``, which ends at once when the signal of the current run (``current``, bound by
/// the pipeline for every task of the run, as ServiceLifecycle binds its graceful-shutdown manager) is
/// requested.
public final class ShutdownSignal: Sendable {
    /// Whether the stop was requested, and the tasks waiting for it.
    private let flag = CancellableWaiters(false)

    public init() {}

    /// The signal of the run the current task works for, if any.
    @TaskLocal public static var current: ShutdownSignal?

    /// Requests the stop; every wait in ``pause(for:)`` ends.
    public func request() {
        flag.change { $0 = true }
    }

    public var isRequested: Bool { flag.withLock { $0 } }

    /// Sleeps for `duration`, unless the current run's signal is requested first (or already was).
    ///
    /// - Throws: ``SluiceError/Code/interrupted`` when the wait was cut short; `CancellationError` when
    ///   the task is cancelled.
    public static func pause(for duration: Duration) async throws {
        try await pause(for: duration, clock: ContinuousClock())
    }

    /// Sleeps for `duration` on `clock`, unless the current run's signal is requested first (or already
    /// was): the waits of the one request loop, with the clock its tests inject.
    ///
    /// - Throws: ``SluiceError/Code/interrupted`` when the wait was cut short; `CancellationError` when
    ///   the task is cancelled.
    package static func pause<C: Clock>(for duration: Duration, clock: C) async throws
    where C.Duration == Duration {
        guard let signal = current else { return try await clock.sleep(for: duration) }
        try await signal.sleep(for: duration, clock: clock)
    }

    /// Sleeps for `duration`, unless this signal is requested first (or already was).
    ///
    /// - Throws: ``SluiceError/Code/interrupted`` when the wait was cut short; `CancellationError` when
    ///   the task is cancelled.
    public func sleep(for duration: Duration) async throws {
        try await sleep(for: duration, clock: ContinuousClock())
    }

    /// Sleeps for `duration` on `clock`, unless this signal is requested first (or already was).
    package func sleep<C: Clock>(for duration: Duration, clock: C) async throws where C.Duration == Duration {
        let slept = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await clock.sleep(for: duration)
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
        await flag.wait(unless: { $0 })
    }
}
