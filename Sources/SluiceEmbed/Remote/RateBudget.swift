import SluiceCore
import SluiceHTTP

/// The owner of a ``RateBudgetStateMachine``: one per embedder, shared by all its concurrent requests.
/// Every ticket that ``acquire(tokens:)`` hands out is settled once: ``answered(_:headers:counted:)``,
/// ``rateLimited(_:headers:pause:)`` or ``failed(_:counted:)``.
///
/// A request that cannot go yet suspends on a continuation; nothing polls. It is resumed when the budget
/// changes (a ticket is settled: the first answer arrived, a share was given back, a pause began) or at the
/// time the machine computed (the buckets refilled, a pause ended), whichever comes first, and then asks
/// the machine again. Time comes from `clock` (a test's manual clock, or the continuous clock).
final class RateBudget<C: Clock>: Sendable where C.Duration == Duration {
    typealias Ticket = RateBudgetStateMachine.Ticket

    private struct Budget: Sendable {
        var machine: RateBudgetStateMachine
        /// Counts the changes that may let a waiting request go; a waiter sleeps only while it holds.
        var generation: UInt64 = 0
    }

    /// The budget, and the requests waiting for it to change.
    private let state: CancellableWaiters<Budget>
    private let clock: C
    private let origin: C.Instant

    init(requestsPerMinute: Int?, tokensPerMinute: Int?, clock: C) {
        self.clock = clock
        origin = clock.now
        state = CancellableWaiters(
            Budget(
                machine: RateBudgetStateMachine(
                    requestsPerMinute: requestsPerMinute,
                    tokensPerMinute: tokensPerMinute,
                    now: 0
                )
            )
        )
    }

    /// Seconds since the budget was made, on its clock.
    private var now: Double { origin.duration(to: clock.now).seconds }

    private func instant(_ seconds: Double) -> C.Instant {
        origin.advanced(by: HTTPResponse.duration(seconds: max(0, seconds), cap: .seconds(86_400 * 365)))
    }

    /// Suspends until one request with `tokens` tokens fits the budget, then takes it.
    ///
    /// - Throws: ``SluiceError/Code/interrupted`` when the run's ``ShutdownSignal`` is requested while it
    ///   waits (a rate-limit pause may be minutes long); `CancellationError` when the task is cancelled.
    func acquire(tokens: Int) async throws -> Ticket {
        while true {
            try Task.checkCancellation()
            let (decision, generation) = state.withLock { state in
                (state.machine.reserve(tokens: tokens, now: now), state.generation)
            }
            switch decision {
            case .proceed(let ticket): return ticket
            case .wait(let until): try await suspend(after: generation, until: until)
            case .waitForAnswer: try await suspend(after: generation, until: nil)
            }
        }
    }

    func answered(_ ticket: Ticket, headers: RateLimitSnapshot, counted: Bool) {
        change { $0.answered(ticket, headers: headers, counted: counted, now: now) }
    }

    /// A 429 for `ticket`: nothing starts for `pause` (the ``RetryStateMachine``'s decision).
    func rateLimited(_ ticket: Ticket, headers: RateLimitSnapshot, pause: Duration) {
        change { $0.rateLimited(ticket, headers: headers, pause: pause.seconds, now: now) }
    }

    func failed(_ ticket: Ticket, counted: Bool) {
        change { $0.failed(ticket, counted: counted, now: now) }
    }

    /// How many requests are suspended now (for tests).
    var waiting: Int { state.waiting }

    /// Applies a change to the machine and wakes every waiter to ask again.
    private func change(_ body: (inout RateBudgetStateMachine) -> Void) {
        state.change { budget in
            body(&budget.machine)
            budget.generation &+= 1
        }
    }

    /// Returns when the budget changed since `generation`, at `until` (seconds on the budget's clock), or
    /// when the run's shutdown signal is requested (throws ``SluiceError/Code/interrupted``).
    private func suspend(after generation: UInt64, until: Double?) async throws {
        let signal = ShutdownSignal.current
        let interrupted = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                await self.changed(after: generation)
                return false
            }
            if let until {
                let deadline = instant(until)
                group.addTask {
                    try await self.clock.sleep(until: deadline, tolerance: nil)
                    return false
                }
            }
            if let signal {
                group.addTask {
                    await signal.requested()
                    return signal.isRequested
                }
            }
            defer { group.cancelAll() }
            return try await group.next() ?? false
        }
        if interrupted {
            throw SluiceError(.interrupted, "a rate-limit wait was cut short: the run is stopping")
        }
    }

    /// Returns once a change follows `generation` (at once if one already did), or the task is cancelled.
    private func changed(after generation: UInt64) async {
        await state.wait(unless: { $0.generation != generation })
    }
}

extension RateBudget where C == ContinuousClock {
    convenience init(requestsPerMinute: Int?, tokensPerMinute: Int?) {
        self.init(requestsPerMinute: requestsPerMinute, tokensPerMinute: tokensPerMinute, clock: ContinuousClock())
    }
}
