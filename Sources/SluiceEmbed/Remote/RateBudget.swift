import SluiceCore
import SluiceHTTP
import Synchronization

/// The owner of a ``RateBudgetStateMachine``: one per embedder, shared by all its concurrent requests.
/// Every ticket that ``acquire(tokens:)`` hands out is settled once: ``answered(_:headers:counted:)``,
/// ``rateLimited(_:headers:retryAfter:fallback:)`` or ``failed(_:counted:)``.
final class RateBudget: Sendable {
    typealias Ticket = RateBudgetStateMachine.Ticket

    private let machine: Mutex<RateBudgetStateMachine>
    private let clock = ContinuousClock()
    private let origin: ContinuousClock.Instant
    /// How often a request waiting for the first answer looks again.
    private static let answerPoll: Duration = .milliseconds(5)

    init(requestsPerMinute: Int?, tokensPerMinute: Int?) {
        origin = clock.now
        machine = Mutex(
            RateBudgetStateMachine(requestsPerMinute: requestsPerMinute, tokensPerMinute: tokensPerMinute, now: 0)
        )
    }

    private var now: Double { origin.duration(to: clock.now).seconds }

    /// Suspends until one request with `tokens` tokens fits the budget, then takes it.
    func acquire(tokens: Int) async throws -> Ticket {
        while true {
            let decision = machine.withLock { $0.reserve(tokens: tokens, now: now) }
            switch decision {
            case .proceed(let ticket): return ticket
            case .wait(let until):
                // Ended by the run's shutdown signal (a rate-limit pause may be minutes long).
                try await ShutdownSignal.pause(
                    for: HTTPResponse.duration(seconds: max(0.001, until - now), cap: .seconds(3600))
                )
            case .waitForAnswer:
                try await ShutdownSignal.pause(for: Self.answerPoll)
            }
        }
    }

    func answered(_ ticket: Ticket, headers: RateLimitSnapshot, counted: Bool) {
        machine.withLock { $0.answered(ticket, headers: headers, counted: counted, now: now) }
    }

    func rateLimited(_ ticket: Ticket, headers: RateLimitSnapshot, retryAfter: Duration?, fallback: Duration) {
        machine.withLock {
            $0.rateLimited(
                ticket,
                headers: headers,
                retryAfter: retryAfter?.seconds,
                fallback: fallback.seconds,
                now: now
            )
        }
    }

    func failed(_ ticket: Ticket, counted: Bool) {
        machine.withLock { $0.failed(ticket, counted: counted, now: now) }
    }
}
