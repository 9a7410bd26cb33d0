import SluiceCore
import SluiceTesting
import Synchronization
import Testing

@testable import SluiceEmbed

/// The owner of the rate budget on a manual clock: waiters suspend and are resumed by the change that lets
/// them go, or at the computed time — never by polling (a poll would show as more sleeps, or as a waiter
/// that needs time to pass to see an answer).
@Suite struct RateBudgetTests {
    /// Waits, without a duration, until `condition` holds (a generous guard against a hang).
    private func eventually(_ condition: () -> Bool) async throws {
        let guardDeadline = ContinuousClock.now + .seconds(300)
        while !condition() {
            guard ContinuousClock.now < guardDeadline else { throw CancellationError() }
            await Task.yield()
        }
    }

    @Test func aWaiterResumesExactlyWhenTheBucketRefills() async throws {
        let clock = ManualClock()
        // 60 tokens a minute: one a second.
        let budget = RateBudget(requestsPerMinute: nil, tokensPerMinute: 60, clock: clock)
        let first = try await budget.acquire(tokens: 60)
        budget.answered(first, headers: RateLimitSnapshot(), counted: true)
        let waiter = Task { try await budget.acquire(tokens: 30) }
        try await eventually { clock.sleepers == 1 }
        // One sleep, until the moment the bucket holds 30 tokens again.
        #expect(clock.deadlines == [ManualClock.Instant(offset: .seconds(30))])
        clock.advance(to: ManualClock.Instant(offset: .milliseconds(29_999)))
        #expect(clock.sleepers == 1, "resumed before the bucket refilled")
        clock.advance(to: ManualClock.Instant(offset: .seconds(30)))
        _ = try await waiter.value
        #expect(clock.sleepCalls == 1, "the waiter slept more than once: it polled")
        #expect(budget.waiting == 0)
    }

    @Test func aRequestWaitingForTheFirstAnswerIsResumedByTheAnswerNotByTime() async throws {
        let clock = ManualClock()
        let budget = RateBudget(requestsPerMinute: 600, tokensPerMinute: nil, clock: clock)
        let first = try await budget.acquire(tokens: 1)
        let waiter = Task { try await budget.acquire(tokens: 1) }
        try await eventually { budget.waiting == 1 }
        #expect(clock.sleepCalls == 0, "a request waiting for an answer has no time to wait for")
        budget.answered(first, headers: RateLimitSnapshot(), counted: true)
        _ = try await waiter.value
        #expect(clock.now == ManualClock.Instant(offset: .zero))
        #expect(clock.sleepCalls == 0)
    }

    @Test func aRateLimitPauseWakesTheWaitersToItsEnd() async throws {
        let clock = ManualClock()
        let budget = RateBudget(requestsPerMinute: 600, tokensPerMinute: nil, clock: clock)
        let first = try await budget.acquire(tokens: 1)
        let waiter = Task { try await budget.acquire(tokens: 1) }
        try await eventually { budget.waiting == 1 }
        budget.rateLimited(first, headers: RateLimitSnapshot(), pause: .seconds(2))
        // Woken by the change, the waiter now sleeps until the pause ends.
        try await eventually { clock.sleepers == 1 }
        #expect(clock.deadlines == [ManualClock.Instant(offset: .seconds(2))])
        clock.advance(by: .seconds(2))
        _ = try await waiter.value
    }

    @Test func theShutdownSignalEndsAWaitAtOnce() async throws {
        let clock = ManualClock()
        let budget = RateBudget(requestsPerMinute: nil, tokensPerMinute: 60, clock: clock)
        _ = try await budget.acquire(tokens: 60)
        let signal = ShutdownSignal()
        let waiter = Task {
            try await ShutdownSignal.$current.withValue(signal) { try await budget.acquire(tokens: 1) }
        }
        try await eventually { budget.waiting == 1 }
        signal.request()
        let error = await #expect(throws: SluiceError.self) { try await waiter.value }
        #expect(error?.code == .interrupted)
        #expect(budget.waiting == 0 && clock.sleepers == 0)
    }

    @Test func cancellingAWaiterLeavesNothingBehind() async throws {
        let clock = ManualClock()
        let budget = RateBudget(requestsPerMinute: nil, tokensPerMinute: 60, clock: clock)
        let first = try await budget.acquire(tokens: 60)
        budget.answered(first, headers: RateLimitSnapshot(), counted: true)
        let waiter = Task { try await budget.acquire(tokens: 30) }
        try await eventually { clock.sleepers == 1 && budget.waiting == 1 }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(budget.waiting == 0 && clock.sleepers == 0)
    }
}
