import SluiceCore
import SluiceHTTP
import Synchronization

/// The owner of a ``RateBudgetStateMachine``: one per embedder, shared by all its concurrent requests.
final class RateBudget: Sendable {
    private let machine: Mutex<RateBudgetStateMachine>
    private let clock = ContinuousClock()
    private let origin: ContinuousClock.Instant

    init(requestsPerMinute: Int?, tokensPerMinute: Int?) {
        origin = clock.now
        machine = Mutex(
            RateBudgetStateMachine(requestsPerMinute: requestsPerMinute, tokensPerMinute: tokensPerMinute, now: 0)
        )
    }

    private var now: Double { origin.duration(to: clock.now).seconds }

    /// Suspends until one request with `tokens` tokens fits the budget, then takes it.
    func acquire(tokens: Int) async throws {
        while true {
            let decision = machine.withLock { $0.reserve(tokens: tokens, now: now) }
            switch decision {
            case .proceed: return
            case .wait(let until):
                // Ended by the run's shutdown signal (a rate-limit pause may be minutes long).
                try await ShutdownSignal.pause(
                    for: HTTPResponse.duration(seconds: max(0.001, until - now), cap: .seconds(3600))
                )
            }
        }
    }

    func refund(tokens: Int) { machine.withLock { $0.refund(tokens: tokens, now: now) } }

    func rateLimited(retryAfter: Duration?, fallback: Duration) {
        machine.withLock { $0.rateLimited(retryAfter: retryAfter?.seconds, fallback: fallback.seconds, now: now) }
    }

    func observe(_ snapshot: RateLimitSnapshot) {
        guard !snapshot.isEmpty else { return }
        machine.withLock { $0.observe(snapshot, now: now) }
    }
}
