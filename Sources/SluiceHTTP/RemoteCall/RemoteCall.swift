import Foundation
import SluiceCore
import Synchronization

/// The one request loop of Sluice's remote calls: the remote embedders, the reranker, the image captioner,
/// the answer model (`sluice ask`), and the S3 and web sources. A caller gives one attempt (build nothing,
/// send, read the answer into a ``RemoteCallOutcome``); the loop does the rest, the same way for all:
/// - admission: each attempt waits for its ``RemoteCallGate`` (a rate budget and a concurrency limit, where
///   the caller has them) and releases it with how the attempt went;
/// - retries: each retryable failure goes to a ``RetryStateMachine`` under the caller's ``RetryPolicy``, and
///   its action is carried out here: wait (on the injected clock) and try again, pause the gate as a whole
///   (a rate limit under a shared budget), or give up with the caller's error;
/// - `Retry-After`: one meaning, read here from the answer's headers (`retry-after-ms`, else `Retry-After`
///   in seconds or as an HTTP date, cut to ``RetryPolicy/maxRetryAfter``): it replaces the backoff;
/// - shutdown: every wait ends at once when the run's ``ShutdownSignal`` is requested
///   (``SluiceError/Code/interrupted``), and a cancelled task stops before its next attempt;
/// - classification: a transport failure the HTTP client calls transient (a reset, a refused connection,
///   DNS, a timeout) is retried, and when the retries are spent the caller's `gaveUp` error says so (the
///   callers make it ``SluiceError/Code/dependencyUnavailable``, exit 6, where the dependency is the
///   run's); another transport failure goes through `transportFailed`; an answer the caller stops on
///   (``RemoteCallOutcome/stop(_:headers:)``: a bad request) is never retried, and one coded
///   ``SluiceError/Code/providerRefused`` (401/403, an exhausted quota: exit 5) refuses every later call
///   of this loop at once, without a request.
package final class RemoteCall<Gate: RemoteCallGate, C: Clock>: Sendable where C.Duration == Duration {
    package let policy: RetryPolicy
    package let gate: Gate
    private let clock: C
    /// Draws the backoff's jitter from [0, 1).
    private let unit: @Sendable () -> Double
    private let refusal = Mutex<SluiceError?>(nil)

    /// - Parameters:
    ///   - clock: What the backoff waits on (a `ManualClock` in tests).
    ///   - unit: The random draw for the backoff's jitter.
    package init(
        policy: RetryPolicy,
        gate: Gate,
        clock: C,
        unit: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.policy = policy
        self.gate = gate
        self.clock = clock
        self.unit = unit
    }

    /// The refusal every later call fails with, once a provider refused to go on.
    package var refused: SluiceError? { refusal.withLock { $0 } }

    /// Throws the refusal, if a provider refused to go on.
    package func checkRefusal() throws {
        if let refused { throw refused }
    }

    /// Runs `attempt` until it finishes, stops, or its retries are spent.
    ///
    /// - Parameters:
    ///   - cost: What an attempt costs the gate (tokens; 0 where none are counted).
    ///   - what: Names the request in the reason of a transport failure (`what: message`); nil: the
    ///     error's own description (`code: message`).
    ///   - onRetry: Called before each retry (the caller's counters).
    ///   - transportFailed: The error for a transport failure that is not worth a retry.
    ///   - gaveUp: The error once the retries are spent.
    ///   - attempt: One attempt; a ``SluiceError`` it throws is a transport failure.
    /// - Returns: The finished attempt's value.
    /// - Throws: As described on the type; `CancellationError`.
    package func run<Value: Sendable>(
        cost: Int = 0,
        what: String? = nil,
        onRetry: () -> Void = {},
        transportFailed: (SluiceError) -> any Error = { $0 },
        gaveUp: (RemoteCallGiveUp) -> any Error,
        attempt: () async throws -> RemoteCallOutcome<Value>
    ) async throws -> Value {
        var machine = RetryStateMachine(policy: policy)
        while true {
            try Task.checkCancellation()
            try checkRefusal()
            let permit = try await gate.admit(cost: cost)
            let outcome: RemoteCallOutcome<Value>
            do {
                outcome = try await attempt()
            } catch let error as SluiceError where error.isTransient {
                // A reset or refused connection never reached the server's count; a timeout may have.
                let timedOut = error.code == .timeout
                gate.release(permit, .unanswered(counted: timedOut, load: timedOut ? .overloaded : .neutral))
                let reason = what.map { "\($0): \(error.message)" } ?? error.description
                let action = machine.failed(.transient(reason: reason), unit: unit())
                // A connection that never got an answer (refused, reset, DNS): the server was not reached.
                try await carryOut(action, unreachable: error.code == .network, onRetry: onRetry, gaveUp: gaveUp)
                continue
            } catch let error as SluiceError {
                gate.release(permit, .unanswered(counted: true, load: .neutral))
                throw transportFailed(error)
            } catch {
                gate.release(permit, .unanswered(counted: false, load: .neutral))
                throw error
            }
            switch outcome {
            case .finished(let value, let headers, let counted):
                gate.release(permit, .answered(headers: headers, counted: counted, load: counted ? .success : .neutral))
                return value
            case .stop(let error, let headers):
                gate.release(permit, .answered(headers: headers, counted: false, load: .neutral))
                if let refused = error as? SluiceError, refused.code == .providerRefused {
                    refusal.withLock { if $0 == nil { $0 = refused } }
                }
                throw error
            case .retry(let kind, let reason, let headers):
                let wait = serverWait(headers)
                switch kind {
                case .transient:
                    // Not counted against the provider's limits: the retry does not pay twice.
                    gate.release(permit, .answered(headers: headers, counted: false, load: .neutral))
                    let action = machine.failed(.transient(reason: reason, serverWait: wait), unit: unit())
                    try await carryOut(action, unreachable: false, onRetry: onRetry, gaveUp: gaveUp)
                case .rateLimited:
                    let action = machine.failed(.rateLimited(reason: reason, serverWait: wait), unit: unit())
                    if case .pauseBudget(let pause) = action {
                        // The wait is the gate's: its next admission holds this attempt and every other.
                        gate.release(permit, .rateLimited(headers: headers, pause: pause))
                        onRetry()
                    } else {
                        gate.release(permit, .rateLimited(headers: headers, pause: .zero))
                        try await carryOut(action, unreachable: false, onRetry: onRetry, gaveUp: gaveUp)
                    }
                }
            }
        }
    }

    /// The wait a server named in an answer's headers, cut to the policy's cap.
    package func serverWait(_ headers: [String: String]) -> Duration? {
        guard !headers.isEmpty else { return nil }
        return HTTPResponse(status: 0, headers: headers, body: []).retryAfter(cap: policy.maxRetryAfter)
    }

    /// Waits as the machine's action says, or throws when the retries are spent.
    private func carryOut(
        _ action: RetryStateMachine.Action,
        unreachable: Bool,
        onRetry: () -> Void,
        gaveUp: (RemoteCallGiveUp) -> any Error
    ) async throws {
        switch action {
        case .retry(let delay), .pauseBudget(let delay):
            onRetry()
            try await ShutdownSignal.pause(for: delay, clock: clock)
        case .giveUp(let giveUp):
            throw gaveUp(RemoteCallGiveUp(giveUp, unreachable: unreachable))
        }
    }
}

/// Why a ``RemoteCall`` gave up: the ``RetryStateMachine``'s reason, and whether the server was never
/// reached at the last attempt (a refused or reset connection, a name that does not resolve), which a
/// caller may report as its dependency being unreachable rather than failing.
package struct RemoteCallGiveUp: Sendable, Hashable, CustomStringConvertible {
    package var giveUp: RetryStateMachine.GiveUp
    /// The last attempt failed to connect (``SluiceError/Code/network``); a timeout or an answer is not that.
    package var unreachable: Bool

    package init(_ giveUp: RetryStateMachine.GiveUp, unreachable: Bool) {
        self.giveUp = giveUp
        self.unreachable = unreachable
    }

    package var attempts: Int { giveUp.attempts }
    package var rateLimited: Bool { giveUp.rateLimited }
    package var reason: String { giveUp.reason }
    package var description: String { giveUp.description }
}

extension RemoteCall where C == ContinuousClock {
    /// On the continuous clock.
    package convenience init(policy: RetryPolicy, gate: Gate) {
        self.init(policy: policy, gate: gate, clock: ContinuousClock())
    }
}

extension RemoteCall where Gate == OpenGate, C == ContinuousClock {
    /// Without a gate, on the continuous clock.
    package convenience init(policy: RetryPolicy) {
        self.init(policy: policy, gate: OpenGate(), clock: ContinuousClock())
    }
}
