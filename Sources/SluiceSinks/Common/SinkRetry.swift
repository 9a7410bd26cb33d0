import SluiceCore

/// The attempts of one store write, as a pure value: each failure either yields the delay before the
/// next attempt (from the shared ``Backoff``, at least a server's `Retry-After`) or says to give up.
struct SinkRetryStateMachine: Sendable {
    var attempts: Int
    var backoff: Backoff
    private(set) var failures = 0

    init(attempts: Int, base: Duration = .milliseconds(100), cap: Duration = .seconds(10)) {
        self.attempts = max(1, attempts)
        self.backoff = Backoff(base: base, cap: cap)
    }

    enum Action: Equatable {
        case retry(after: Duration)
        case giveUp
    }

    /// Records a failure. `retryAfter` (a server's hint, e.g. HTTP `Retry-After`) is a floor for the delay.
    mutating func failed(retryAfter: Duration? = nil, random: Double) -> Action {
        failures += 1
        guard failures < attempts else { return .giveUp }
        return .retry(after: max(backoff.delay(attempt: failures - 1, unit: random), retryAfter ?? .zero))
    }
}

/// Runs `body` until it succeeds, retrying errors coded ``SluiceError/Code/sinkUnavailable`` as
/// ``SinkRetryStateMachine`` says; other errors are thrown at once, and so is
/// ``SluiceError/Code/interrupted`` when the run's ``ShutdownSignal`` cuts a wait short.
func withSinkRetries<T: Sendable>(
    attempts: Int,
    what: String,
    _ body: () async throws -> T
) async throws -> T {
    var retry = SinkRetryStateMachine(attempts: attempts)
    while true {
        do {
            return try await body()
        } catch let error as SluiceError where error.code == .sinkUnavailable {
            let hint = (error.cause as? RetryAfterHint)?.delay
            switch retry.failed(retryAfter: hint, random: Double.random(in: 0...1)) {
            case .retry(let delay):
                // Ended at once by the run's shutdown signal: a stopping run does not wait out a store's pause.
                try await ShutdownSignal.pause(for: delay)
            case .giveUp:
                throw SluiceError(
                    .sinkFailed,
                    "\(what): gave up after \(retry.failures) attempts: \(error.message)",
                    cause: error
                )
            }
        }
    }
}

/// A server's request to wait before retrying (HTTP `Retry-After`), carried as an error's cause.
struct RetryAfterHint: Error, Sendable {
    var delay: Duration
}
