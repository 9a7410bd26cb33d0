import SluiceCore
import SluiceHTTP

extension RetryPolicy {
    /// The stores' policy: `sink.max_retries` retries of a transient failure (a 429 counts against the same
    /// limit), backoff from 100 ms up to 10 s, a server's `Retry-After` honoured up to `maxRetryAfter`.
    static func store(maxRetries: Int, maxRetryAfter: Duration = HTTPResponse.defaultRetryAfterCap) -> RetryPolicy {
        RetryPolicy(
            maxRetries: maxRetries,
            backoff: Backoff(base: .milliseconds(100), cap: .seconds(10)),
            maxRetryAfter: maxRetryAfter
        )
    }
}

/// Runs `body` until it succeeds, retrying errors coded ``SluiceError/Code/sinkUnavailable`` as a
/// ``RetryStateMachine`` under `policy` says (a ``ServerRetryHint`` cause says whether it was a rate limit and
/// what the server asked to wait); other errors are thrown at once, and so is
/// ``SluiceError/Code/interrupted`` when the run's ``ShutdownSignal`` cuts a wait short.
func withSinkRetries<T: Sendable>(
    policy: RetryPolicy,
    what: String,
    _ body: () async throws -> T
) async throws -> T {
    var retry = RetryStateMachine(policy: policy)
    while true {
        do {
            return try await body()
        } catch let error as SluiceError where error.code == .sinkUnavailable {
            let hint = error.cause as? ServerRetryHint
            let failure: RetryStateMachine.Failure =
                hint?.rateLimited == true
                ? .rateLimited(reason: error.message, serverWait: hint?.wait)
                : .transient(reason: error.message, serverWait: hint?.wait)
            switch retry.failed(failure, unit: Double.random(in: 0..<1)) {
            case .retry(let delay), .pauseBudget(let delay):
                // Ended at once by the run's shutdown signal: a stopping run does not wait out a store's pause.
                try await ShutdownSignal.pause(for: delay)
            case .giveUp(let giveUp):
                throw SluiceError(
                    .sinkFailed,
                    "\(what): gave up after \(giveUp.attempts) attempts: \(error.message)",
                    cause: error
                )
            }
        }
    }
}

/// What a store's answer said about retrying (HTTP 429 or 5xx, with its `Retry-After`), carried as an
/// error's cause.
struct ServerRetryHint: Error, Sendable {
    /// The server's wait (`retry-after-ms`/`Retry-After`), already cut to the cap; nil: none given.
    var wait: Duration?
    /// A 429 rather than a 5xx.
    var rateLimited: Bool
}
