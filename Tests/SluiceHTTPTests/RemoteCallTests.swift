import SluiceCore
import SluiceTesting
import Synchronization
import Testing

@testable import SluiceHTTP

/// The one request loop on a manual clock, with a scripted attempt and a recording gate: each test says
/// what the attempts answer and checks what the loop did — how long it waited, what the gate was told,
/// what it threw. Nothing waits for a duration: a test waits until the loop is suspended on the clock.
@Suite struct RemoteCallTests {
    /// A gate that admits at once and records every release.
    final class RecordingGate: RemoteCallGate {
        private let state = Mutex<(admitted: Int, releases: [RemoteCallRelease])>((0, []))

        var admitted: Int { state.withLock { $0.admitted } }
        var releases: [RemoteCallRelease] { state.withLock { $0.releases } }

        func admit(cost: Int) async throws -> Int {
            state.withLock {
                $0.admitted += 1
                return $0.admitted
            }
        }

        func release(_ permit: Int, _ release: RemoteCallRelease) {
            state.withLock { $0.releases.append(release) }
        }
    }

    /// Attempts answered from a script, in order; counts them.
    final class Script: Sendable {
        private let state: Mutex<(answers: [RemoteCallOutcome<String>], attempts: Int)>
        private let errors: Mutex<[SluiceError?]>

        init(_ answers: [RemoteCallOutcome<String>], throwing errors: [SluiceError?] = []) {
            state = Mutex((answers, 0))
            self.errors = Mutex(errors)
        }

        var attempts: Int { state.withLock { $0.attempts } }

        func next() throws -> RemoteCallOutcome<String> {
            // The scripted errors come first, one an attempt; then the answers; then "done".
            let error = errors.withLock { $0.isEmpty ? nil : $0.removeFirst() }
            return try state.withLock { state -> RemoteCallOutcome<String> in
                state.attempts += 1
                if let error { throw error }
                return state.answers.isEmpty ? .finished("done") : state.answers.removeFirst()
            }
        }
    }

    /// Counts the retries the loop reports.
    final class Tally: Sendable {
        private let count = Mutex(0)
        var value: Int { count.withLock { $0 } }
        func add() { count.withLock { $0 += 1 } }
    }

    struct GaveUp: Error, Equatable {
        var attempts: Int
        var rateLimited: Bool
        var reason: String
        var unreachable = false
    }

    private static func policy(retries: Int = 3, shared: Bool = false) -> RetryPolicy {
        RetryPolicy(
            maxRetries: retries,
            backoff: Backoff(base: .seconds(1), cap: .seconds(8)),
            maxRetryAfter: .seconds(30),
            sharesBudget: shared
        )
    }

    private static func run(
        _ call: RemoteCall<some RemoteCallGate, ManualClock>,
        _ script: Script,
        retried: Tally = Tally()
    ) async throws -> String {
        try await call.run(
            what: "fetching x",
            onRetry: { retried.add() },
            transportFailed: { SluiceError(.dependencyUnavailable, "mapped: \($0.message)") },
            gaveUp: {
                GaveUp(
                    attempts: $0.attempts,
                    rateLimited: $0.rateLimited,
                    reason: $0.reason,
                    unreachable: $0.unreachable
                )
            },
            attempt: { try script.next() }
        )
    }

    /// Waits, without a duration, until `condition` holds (a generous guard against a hang).
    private func eventually(_ condition: () -> Bool) async throws {
        let guardDeadline = ContinuousClock.now + .seconds(30)
        while !condition() {
            guard ContinuousClock.now < guardDeadline else { throw CancellationError() }
            await Task.yield()
        }
    }

    @Test func transientFailuresWaitTheBackoffOnTheClockThenFinish() async throws {
        let clock = ManualClock()
        let call = RemoteCall(policy: Self.policy(), gate: OpenGate(), clock: clock, unit: { 0.5 })
        let script = Script([.retry(.transient, reason: "HTTP 503"), .retry(.transient, reason: "HTTP 502")])
        let task = Task { try await Self.run(call, script) }
        // The first retry waits half of base · 2⁰, the second half of base · 2¹.
        try await eventually { clock.sleepers == 1 }
        #expect(clock.deadlines.map(\.offset) == [.milliseconds(500)])
        clock.advance(by: .milliseconds(500))
        try await eventually { clock.sleepers == 1 && script.attempts == 2 }
        #expect(clock.deadlines.map(\.offset) == [.milliseconds(1500)])
        clock.advance(by: .seconds(1))
        #expect(try await task.value == "done")
        #expect(script.attempts == 3)
    }

    @Test(arguments: [
        (["retry-after": "7"], Duration.seconds(7)),
        (["retry-after-ms": "1500", "retry-after": "9"], .milliseconds(1500)),
        (["retry-after": "100000"], .seconds(30)),
        (["retry-after": "soon"], .milliseconds(500)),
    ])
    func theServersWaitReplacesTheBackoffCutToTheCap(headers: [String: String], wait: Duration) async throws {
        for kind in [RemoteCallRetry.transient, .rateLimited] {
            let clock = ManualClock()
            let call = RemoteCall(policy: Self.policy(), gate: OpenGate(), clock: clock, unit: { 0.5 })
            let script = Script([.retry(kind, reason: "busy", headers: headers)])
            let task = Task { try await Self.run(call, script) }
            try await eventually { clock.sleepers == 1 }
            #expect(clock.deadlines.map(\.offset) == [wait], "\(kind)")
            clock.advance(by: wait)
            #expect(try await task.value == "done")
        }
    }

    @Test func aRateLimitUnderASharedBudgetPausesTheGateNotTheRequest() async throws {
        let clock = ManualClock()
        let gate = RecordingGate()
        let call = RemoteCall(policy: Self.policy(shared: true), gate: gate, clock: clock, unit: { 0.5 })
        let retried = Tally()
        let script = Script([.retry(.rateLimited, reason: "429", headers: ["retry-after": "4"])])
        #expect(try await Self.run(call, script, retried: retried) == "done")
        #expect(clock.sleepCalls == 0)
        #expect(retried.value == 1)
        #expect(
            gate.releases == [
                .rateLimited(headers: ["retry-after": "4"], pause: .seconds(4)),
                .answered(headers: [:], counted: true, load: .success),
            ]
        )
    }

    @Test func spentRetriesGiveUpWithTheLastReason() async throws {
        let call = RemoteCall(policy: Self.policy(retries: 2), gate: OpenGate(), clock: ManualClock(), unit: { 0 })
        let script = Script(Array(repeating: .retry(.transient, reason: "HTTP 500"), count: 5))
        await #expect(throws: GaveUp(attempts: 3, rateLimited: false, reason: "HTTP 500")) {
            try await Self.run(call, script)
        }
        #expect(script.attempts == 3)
    }

    @Test func rateLimitsAndTransientFailuresAreCountedApart() async throws {
        let policy = RetryPolicy(
            maxRetries: 1,
            maxRateLimitRetries: 2,
            backoff: Backoff(base: .zero, cap: .zero),
            maxRetryAfter: .seconds(30)
        )
        let call = RemoteCall(policy: policy, gate: OpenGate(), clock: ManualClock(), unit: { 0 })
        let script = Script([
            .retry(.rateLimited, reason: "429"), .retry(.transient, reason: "503"), .retry(.rateLimited, reason: "429"),
            .retry(.rateLimited, reason: "429 again"),
        ])
        await #expect(throws: GaveUp(attempts: 4, rateLimited: true, reason: "429 again")) {
            try await Self.run(call, script)
        }
    }

    @Test func aStopIsThrownAsItIsWithoutARetry() async throws {
        let gate = RecordingGate()
        let call = RemoteCall(policy: Self.policy(), gate: gate, clock: ManualClock())
        let script = Script([.stop(SluiceError(.configuration, "HTTP 400: no such model"))])
        let stopped = await #expect(throws: SluiceError.self) { try await Self.run(call, script) }
        #expect(stopped?.code == .configuration)
        #expect(script.attempts == 1)
        #expect(gate.releases == [.answered(headers: [:], counted: false, load: .neutral)])
        // Not a refusal: the next call is sent.
        #expect(try await Self.run(call, Script([])) == "done")
    }

    @Test func anAuthRefusalRefusesEveryLaterCallWithoutARequest() async throws {
        let gate = RecordingGate()
        let call = RemoteCall(policy: Self.policy(), gate: gate, clock: ManualClock())
        let refusal = SluiceError(.providerRefused, "HTTP 401: bad key")
        let first = await #expect(throws: SluiceError.self) { try await Self.run(call, Script([.stop(refusal)])) }
        #expect(first?.code == .providerRefused)
        let later = Script([])
        let second = await #expect(throws: SluiceError.self) { try await Self.run(call, later) }
        #expect(second?.message == refusal.message)
        #expect(later.attempts == 0)
        #expect(gate.admitted == 1)
        #expect(throws: SluiceError.self) { try call.checkRefusal() }
    }

    @Test func transportFailuresAreClassified() async throws {
        // Network trouble and timeouts are retried (a timeout may have reached the server, and says it is
        // loaded); another transport failure goes through `transportFailed` at once.
        let gate = RecordingGate()
        let call = RemoteCall(policy: Self.policy(), gate: gate, clock: ManualClock(), unit: { 0 })
        let script = Script(
            [],
            throwing: [SluiceError(.network, "GET x: connection refused"), SluiceError(.timeout, "GET x: timed out")]
        )
        #expect(try await Self.run(call, script) == "done")
        #expect(
            gate.releases == [
                .unanswered(counted: false, load: .neutral),
                .unanswered(counted: true, load: .overloaded),
                .answered(headers: [:], counted: true, load: .success),
            ]
        )
        let broken = Script([], throwing: [SluiceError(.io, "GET x: bad certificate")])
        let mapped = await #expect(throws: SluiceError.self) { try await Self.run(call, broken) }
        #expect(mapped?.code == .dependencyUnavailable)
        #expect(mapped?.message == "mapped: GET x: bad certificate")
        #expect(broken.attempts == 1)
    }

    @Test func anUnreachableServerGivesUpNamingTheRequest() async throws {
        let call = RemoteCall(policy: Self.policy(retries: 1), gate: OpenGate(), clock: ManualClock(), unit: { 0 })
        let script = Script(
            [],
            throwing: Array(repeating: SluiceError(.network, "connection refused"), count: 3)
        )
        await #expect(
            throws: GaveUp(attempts: 2, rateLimited: false, reason: "fetching x: connection refused", unreachable: true)
        ) {
            try await Self.run(call, script)
        }
        // A timeout is not unreachable: the server may be there, and slow.
        let slow = Script([], throwing: Array(repeating: SluiceError(.timeout, "timed out"), count: 3))
        await #expect(throws: GaveUp(attempts: 2, rateLimited: false, reason: "fetching x: timed out")) {
            try await Self.run(call, slow)
        }
        // Nor is a server that answered last, after a refused connection.
        let answered = Script([.retry(.transient, reason: "HTTP 503")], throwing: [SluiceError(.network, "refused")])
        await #expect(throws: GaveUp(attempts: 2, rateLimited: false, reason: "HTTP 503")) {
            try await Self.run(call, answered)
        }
    }

    @Test func aShutdownEndsTheWaitAtOnce() async throws {
        let clock = ManualClock()
        let signal = ShutdownSignal()
        let call = RemoteCall(policy: Self.policy(), gate: OpenGate(), clock: clock, unit: { 0.5 })
        let script = Script([.retry(.transient, reason: "HTTP 503", headers: ["retry-after": "20"])])
        let task = Task {
            try await ShutdownSignal.$current.withValue(signal) { try await Self.run(call, script) }
        }
        try await eventually { clock.sleepers == 1 }
        signal.request()
        let error = await #expect(throws: SluiceError.self) { _ = try await task.value }
        #expect(error?.code == .interrupted)
        #expect(script.attempts == 1)
    }

    @Test func aCancelledTaskMakesNoFurtherAttempt() async throws {
        let clock = ManualClock()
        let call = RemoteCall(policy: Self.policy(), gate: OpenGate(), clock: clock, unit: { 0.5 })
        let script = Script([.retry(.transient, reason: "HTTP 503")])
        let task = Task { try await Self.run(call, script) }
        try await eventually { clock.sleepers == 1 }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(script.attempts == 1)
    }
}
