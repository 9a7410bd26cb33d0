import SluiceCore
import Synchronization

/// The owner of an ``AdaptiveConcurrencyStateMachine``: callers suspend in ``acquire()`` while the
/// adaptive limit is reached.
final class AdaptiveConcurrency: Sendable {
    private struct State {
        var machine: AdaptiveConcurrencyStateMachine
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Mutex<State>
    private let clock = ContinuousClock()
    private let origin: ContinuousClock.Instant

    init(maximum: Int, initial: Int? = nil) {
        origin = clock.now
        state = Mutex(State(machine: AdaptiveConcurrencyStateMachine(maximum: maximum, initial: initial)))
    }

    var limit: Double { state.withLock { $0.machine.limit } }

    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let acquired = state.withLock { state in
                if state.machine.tryAcquire() { return true }
                state.waiters.append(continuation)
                return false
            }
            if acquired { continuation.resume() }
        }
    }

    func release(_ outcome: AdaptiveConcurrencyStateMachine.Outcome) {
        let now = origin.duration(to: clock.now).seconds
        let woken: [CheckedContinuation<Void, Never>] = state.withLock { state in
            _ = state.machine.release(outcome, now: now)
            var woken: [CheckedContinuation<Void, Never>] = []
            while !state.waiters.isEmpty, state.machine.tryAcquire() {
                woken.append(state.waiters.removeFirst())
            }
            return woken
        }
        for continuation in woken { continuation.resume() }
    }
}
