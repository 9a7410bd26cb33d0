import Synchronization

/// A value guarded by a lock, and the tasks waiting for it to change: the one owner of continuation waiters
/// (``ShutdownSignal``, the embedder's rate budget). Nothing polls: a waiter sleeps on a continuation until
/// ``change(_:)`` wakes it or its task is cancelled (``CancellableWaitersStateMachine`` decides).
///
/// The waiters' bookkeeping and the value share one lock, so that a waiter that found its condition false
/// cannot miss the change that makes it true.
package final class CancellableWaiters<Guarded: Sendable>: Sendable {
    private struct State {
        var guarded: Guarded
        var machine = CancellableWaitersStateMachine<CheckedContinuation<Void, Never>>()
    }

    private let state: Mutex<State>

    package init(_ guarded: Guarded) {
        state = Mutex(State(guarded: guarded))
    }

    /// Reads or changes the value without waking anyone.
    package func withLock<R: Sendable>(_ body: (inout Guarded) -> R) -> R {
        state.withLock { body(&$0.guarded) }
    }

    /// Changes the value and wakes every waiter, in the order they began to wait.
    @discardableResult
    package func change<R: Sendable>(_ body: (inout Guarded) -> R) -> R {
        let (result, woken) = state.withLock { state in
            (body(&state.guarded), state.machine.resumeAll())
        }
        for waiter in woken { waiter.resume() }
        return result
    }

    /// How many tasks wait now.
    package var waiting: Int { state.withLock { $0.machine.waiting } }

    /// Returns at once when `ready` holds for the value, else at the next ``change(_:)``, or when the task is
    /// cancelled (before or during the wait).
    package func wait(unless ready: (Guarded) -> Bool) async {
        let id = state.withLock { $0.machine.reserve() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let action = state.withLock { state in
                    state.machine.park(id, continuation, ready: ready(state.guarded))
                }
                if case .resume(let continuation) = action { continuation.resume() }
            }
        } onCancel: {
            let action = state.withLock { $0.machine.cancel(id) }
            if case .resume(let continuation) = action { continuation.resume() }
        }
    }
}
