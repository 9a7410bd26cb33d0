import Synchronization

/// Runs `body`, failing with ``SluiceError/Code/timeout`` if it takes longer than `limit`.
///
/// A blocking call cannot be stopped from outside, and a task group would wait for it: instead the caller
/// is resumed at the deadline, `body`'s task is cancelled (work that checks cancellation, such as a
/// store's scan through ``BlockingExecutor/runCancellable(_:)``, stops there), and the call's eventual
/// result is dropped (a call that does not check stays busy until it returns).
///
/// If the calling task is cancelled first, the caller is resumed at once with `CancellationError` and
/// `body`'s task is cancelled (work still queued on a ``BlockingExecutor`` then never runs).
/// - Parameters:
///   - limit: How long `body` may take.
///   - what: What `body` does, for the time-out's message ("extraction (pdf)").
///   - setting: The setting that sets `limit`, named in the message ("extract.timeout_seconds").
package func withDeadline<T: Sendable>(
    _ limit: Duration,
    what: String,
    setting: String,
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    let race = DeadlineRace<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            race.start(continuation)
            race.own(
                timer: Task {
                    try? await Task.sleep(for: limit)
                    if Task.isCancelled { return }
                    let seconds = Double(limit.components.seconds) + Double(limit.components.attoseconds) * 1e-18
                    race.finish(
                        .failure(SluiceError(.timeout, "\(what) took longer than \(seconds) s (\(setting))")),
                        cancellingWork: true
                    )
                },
                work: Task {
                    let result: Result<T, any Error>
                    do {
                        result = .success(try await body())
                    } catch {
                        result = .failure(error)
                    }
                    race.finish(result)
                }
            )
        }
    } onCancel: {
        race.finish(.failure(CancellationError()), cancellingWork: true)
    }
}

/// The first of the work, the deadline and the caller's cancellation to finish resumes the caller; the
/// others are ignored.
private final class DeadlineRace<T: Sendable>: Sendable {
    private struct State {
        var waiter: CheckedContinuation<T, any Error>?
        var timer: Task<Void, Never>?
        var work: Task<Void, Never>?
        /// Set by the first `finish`; kept until `start` when that came first (a cancelled caller).
        var outcome: Result<T, any Error>?
        var workCancelled = false
    }

    private let state = Mutex(State())

    func start(_ continuation: CheckedContinuation<T, any Error>) {
        let early = state.withLock { state -> Result<T, any Error>? in
            if let outcome = state.outcome { return outcome }
            state.waiter = continuation
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    func own(timer: Task<Void, Never>, work: Task<Void, Never>) {
        let (finished, cancelWork) = state.withLock { state -> (Bool, Bool) in
            if state.outcome != nil { return (true, state.workCancelled) }
            state.timer = timer
            state.work = work
            return (false, false)
        }
        if finished { timer.cancel() }
        if cancelWork { work.cancel() }
    }

    func finish(_ result: Result<T, any Error>, cancellingWork: Bool = false) {
        let taken = state.withLock {
            state -> (CheckedContinuation<T, any Error>?, Task<Void, Never>?, Task<Void, Never>?)? in
            if state.outcome != nil { return nil }
            state.outcome = result
            state.workCancelled = cancellingWork
            defer {
                state.waiter = nil
                state.timer = nil
                state.work = nil
            }
            return (state.waiter, state.timer, cancellingWork ? state.work : nil)
        }
        guard let (waiter, timer, work) = taken else { return }
        timer?.cancel()
        work?.cancel()
        waiter?.resume(with: result)
    }
}
