/// The retries of one request, as a pure value: the owner reports each failure and carries out the
/// ``Action`` that comes back — wait and try again, pause the shared budget and try again, or give up
/// with the reason. No clock, no task, no random source inside: the owner passes the random draw for the
/// backoff's jitter, so every transition is testable as it is.
///
/// The rules (``RetryPolicy``): transient failures and rate limits are counted apart, each against its
/// own limit; the n-th of a kind waits ``Backoff/delay(attempt:unit:)`` for n-1, unless the server named
/// a wait, which replaces it (cut to ``RetryPolicy/maxRetryAfter``); a rate limit under a shared budget
/// pauses that budget instead of one request's wait. Once given up, the machine stays given up.
package struct RetryStateMachine: Sendable {
    /// Why an attempt failed, as the owner classified it.
    package enum Failure: Sendable, Hashable {
        /// Worth another attempt (5xx, 408, 409, a reset, a timeout, a stream cut before any text);
        /// `serverWait` is the server's `Retry-After` if it sent one (a 503 may).
        case transient(reason: String, serverWait: Duration? = nil)
        /// The server's rate limit (429, a full queue), with its `Retry-After` if any.
        case rateLimited(reason: String, serverWait: Duration? = nil)

        var reason: String {
            switch self {
            case .transient(let reason, _), .rateLimited(let reason, _): reason
            }
        }
    }

    /// What the owner does next.
    package enum Action: Sendable, Hashable {
        /// Wait this long, then send the request again.
        case retry(after: Duration)
        /// Pause the budget every request shares for this long, then send again when it admits one.
        case pauseBudget(for: Duration)
        /// Stop: the failures are spent.
        case giveUp(GiveUp)
    }

    /// Why the machine gave up, for the owner's error message.
    package struct GiveUp: Sendable, Hashable, CustomStringConvertible {
        /// Every attempt made, the first included.
        package var attempts: Int
        /// Whether the last failure, the one over its limit, was a rate limit.
        package var rateLimited: Bool
        /// The last failure's reason.
        package var reason: String

        package init(attempts: Int, rateLimited: Bool, reason: String) {
            self.attempts = attempts
            self.rateLimited = rateLimited
            self.reason = reason
        }

        /// `gave up after 3 attempts: HTTP 503: …` (`… 31 attempts (rate limited): …`).
        package var description: String {
            "gave up after \(attempts) attempts\(rateLimited ? " (rate limited)" : ""): \(reason)"
        }
    }

    private enum State: Sendable, Hashable {
        case attempting(transient: Int, rateLimited: Int)
        case gaveUp(GiveUp)
    }

    package let policy: RetryPolicy
    private var state: State = .attempting(transient: 0, rateLimited: 0)

    package init(policy: RetryPolicy) {
        self.policy = policy
    }

    /// Whether the machine has given up.
    package var hasGivenUp: Bool {
        if case .gaveUp = state { return true }
        return false
    }

    /// Records a failed attempt; `unit` is a draw from [0, 1) for the backoff's jitter.
    package mutating func failed(_ failure: Failure, unit: Double) -> Action {
        guard case .attempting(var transient, var rateLimited) = state else {
            guard case .gaveUp(let giveUp) = state else { preconditionFailure("unreachable") }
            return .giveUp(giveUp)
        }
        let count: Int
        let limit: Int
        let serverWait: Duration?
        let isRateLimit: Bool
        switch failure {
        case .transient(_, let wait):
            transient += 1
            count = transient
            limit = policy.maxRetries
            serverWait = wait
            isRateLimit = false
        case .rateLimited(_, let wait):
            rateLimited += 1
            count = rateLimited
            limit = policy.maxRateLimitRetries
            serverWait = wait
            isRateLimit = true
        }
        guard count <= limit else {
            let giveUp = GiveUp(
                attempts: transient + rateLimited,
                rateLimited: isRateLimit,
                reason: failure.reason
            )
            state = .gaveUp(giveUp)
            return .giveUp(giveUp)
        }
        state = .attempting(transient: transient, rateLimited: rateLimited)
        let delay =
            serverWait.map { min(max(.zero, $0), policy.maxRetryAfter) }
            ?? policy.backoff.delay(attempt: count - 1, unit: unit)
        if isRateLimit, policy.sharesBudget { return .pauseBudget(for: delay) }
        return .retry(after: delay)
    }
}
