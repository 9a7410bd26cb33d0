import SluiceCore
import Testing

/// The one retry policy, transition by transition, without tasks, clocks or I/O.
@Suite struct RetryStateMachineTests {
    private func policy(
        maxRetries: Int = 2,
        maxRateLimitRetries: Int? = nil,
        maxRetryAfter: Duration = .seconds(5),
        sharesBudget: Bool = false
    ) -> RetryPolicy {
        RetryPolicy(
            maxRetries: maxRetries,
            maxRateLimitRetries: maxRateLimitRetries,
            backoff: Backoff(base: .milliseconds(100), cap: .milliseconds(250)),
            maxRetryAfter: maxRetryAfter,
            sharesBudget: sharesBudget
        )
    }

    @Test("transient failures back off exponentially, then give up with the attempts and the last reason")
    func transientFailuresBackOffThenGiveUp() {
        var machine = RetryStateMachine(policy: policy(maxRetries: 3))
        #expect(machine.failed(.transient(reason: "HTTP 500"), unit: 1) == .retry(after: .milliseconds(100)))
        #expect(machine.failed(.transient(reason: "HTTP 502"), unit: 1) == .retry(after: .milliseconds(200)))
        #expect(machine.failed(.transient(reason: "reset"), unit: 1) == .retry(after: .milliseconds(250)))
        #expect(!machine.hasGivenUp)
        let last = machine.failed(.transient(reason: "HTTP 503"), unit: 1)
        #expect(last == .giveUp(.init(attempts: 4, rateLimited: false, reason: "HTTP 503")))
        #expect(machine.hasGivenUp)
        if case .giveUp(let giveUp) = last {
            #expect(giveUp.description == "gave up after 4 attempts: HTTP 503")
        }
    }

    @Test("max_retries counts retries: 0 tries once")
    func zeroRetriesTriesOnce() {
        var machine = RetryStateMachine(policy: policy(maxRetries: 0))
        #expect(
            machine.failed(.transient(reason: "x"), unit: 0.5)
                == .giveUp(.init(attempts: 1, rateLimited: false, reason: "x"))
        )
    }

    @Test("the jitter draw scales the backoff")
    func jitter() {
        var machine = RetryStateMachine(policy: policy())
        #expect(machine.failed(.transient(reason: "x"), unit: 0) == .retry(after: .zero))
        #expect(machine.failed(.transient(reason: "x"), unit: 0.5) == .retry(after: .milliseconds(100)))
    }

    @Test("a server's wait replaces the backoff, shorter or longer, and is cut to the cap")
    func serverWaitReplacesTheBackoff() {
        var machine = RetryStateMachine(policy: policy(maxRetries: 5, maxRetryAfter: .seconds(5)))
        // Shorter than the backoff would be: not a floor.
        #expect(
            machine.failed(.transient(reason: "503", serverWait: .milliseconds(10)), unit: 1)
                == .retry(after: .milliseconds(10))
        )
        // Longer than the backoff's cap: honoured.
        #expect(
            machine.failed(.rateLimited(reason: "429", serverWait: .seconds(2)), unit: 1) == .retry(after: .seconds(2))
        )
        // Longer than the policy's cap: cut.
        #expect(
            machine.failed(.rateLimited(reason: "429", serverWait: .seconds(3600)), unit: 1)
                == .retry(after: .seconds(5))
        )
        // A zero wait is a wait of zero, not "none".
        #expect(machine.failed(.rateLimited(reason: "429", serverWait: .zero), unit: 1) == .retry(after: .zero))
    }

    @Test("rate limits and transient failures count apart, each against its own limit")
    func rateLimitsCountApart() {
        var machine = RetryStateMachine(policy: policy(maxRetries: 1, maxRateLimitRetries: 2))
        #expect(machine.failed(.rateLimited(reason: "429"), unit: 1) == .retry(after: .milliseconds(100)))
        // The first transient failure backs off from the first step: the rate limits did not advance it.
        #expect(machine.failed(.transient(reason: "500"), unit: 1) == .retry(after: .milliseconds(100)))
        #expect(machine.failed(.rateLimited(reason: "429"), unit: 1) == .retry(after: .milliseconds(200)))
        #expect(
            machine.failed(.rateLimited(reason: "429 again"), unit: 1)
                == .giveUp(.init(attempts: 4, rateLimited: true, reason: "429 again"))
        )
    }

    @Test("a rate limit under a shared budget pauses the budget; a transient failure still waits alone")
    func sharedBudgetPauses() {
        var machine = RetryStateMachine(policy: policy(maxRetries: 2, sharesBudget: true))
        #expect(
            machine.failed(.rateLimited(reason: "429", serverWait: .seconds(1)), unit: 1)
                == .pauseBudget(for: .seconds(1))
        )
        #expect(machine.failed(.rateLimited(reason: "429"), unit: 1) == .pauseBudget(for: .milliseconds(200)))
        #expect(
            machine.failed(.transient(reason: "500", serverWait: .seconds(1)), unit: 1) == .retry(after: .seconds(1))
        )
        if case .giveUp(let giveUp) = machine.failed(.rateLimited(reason: "429"), unit: 1) {
            #expect(giveUp.description == "gave up after 4 attempts (rate limited): 429")
        } else {
            Issue.record("expected to give up")
        }
    }

    @Test("once given up, every later failure gives the same answer")
    func givenUpStaysGivenUp() {
        var machine = RetryStateMachine(policy: policy(maxRetries: 0))
        let first = machine.failed(.transient(reason: "first"), unit: 1)
        #expect(machine.failed(.rateLimited(reason: "second"), unit: 1) == first)
        #expect(machine.failed(.transient(reason: "third"), unit: 1) == first)
    }

    @Test("negative limits and waits are taken as zero")
    func absurdSettings() {
        let clamped = RetryPolicy(
            maxRetries: -3,
            backoff: Backoff(base: .milliseconds(1), cap: .milliseconds(1)),
            maxRetryAfter: .seconds(-1)
        )
        #expect(clamped.maxRetries == 0 && clamped.maxRateLimitRetries == 0 && clamped.maxRetryAfter == .zero)
        var machine = RetryStateMachine(policy: policy(maxRetries: 1))
        #expect(machine.failed(.transient(reason: "x", serverWait: .seconds(-2)), unit: 1) == .retry(after: .zero))
    }
}
