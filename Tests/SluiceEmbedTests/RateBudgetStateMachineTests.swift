import Testing

@testable import SluiceEmbed

@Suite struct RateBudgetStateMachineTests {
    /// A budget past its first answer, so that only the buckets decide.
    private func budget(rpm: Int? = nil, tpm: Int? = nil) -> RateBudgetStateMachine {
        RateBudgetStateMachine(requestsPerMinute: rpm, tokensPerMinute: tpm, now: 0, awaitingFirstAnswer: false)
    }

    @Test func tokenBucketRefillsContinuously() {
        var budget = budget(tpm: 6_000)
        #expect(budget.reserve(tokens: 6_000, now: 0).ticket != nil)
        // 100 tokens/s: 500 tokens are there after 5 s.
        #expect(budget.reserve(tokens: 500, now: 1) == .wait(until: 5))
        #expect(budget.reserve(tokens: 500, now: 5).ticket != nil)
        #expect(budget.reserve(tokens: 1, now: 5).ticket == nil)
    }

    @Test func requestsPerMinuteLimitsRequests() {
        var budget = budget(rpm: 60)
        for _ in 0..<60 { #expect(budget.reserve(tokens: 10, now: 0).ticket != nil) }
        #expect(budget.reserve(tokens: 10, now: 0) == .wait(until: 1))
    }

    @Test func anOversizedRequestWaitsForAFullBucketThenGoesIntoDebt() {
        var budget = budget(tpm: 600)
        #expect(budget.reserve(tokens: 1_000, now: 0).ticket != nil)
        #expect(budget.tokens?.level == -400)
        #expect(budget.reserve(tokens: 1, now: 0) == .wait(until: 40.1))
    }

    @Test func rateLimitWithoutHeadersPausesEverythingAndEmptiesTheBuckets() {
        var budget = budget(rpm: 600, tpm: 60_000)
        let first = budget.reserve(tokens: 1, now: 10).ticket!
        budget.rateLimited(first, headers: RateLimitSnapshot(), pause: 2, now: 10)
        #expect(budget.reserve(tokens: 1, now: 11) == .wait(until: 12))
        #expect(budget.tokens!.level <= 0)
        let second = budget.reserve(tokens: 1, now: 20).ticket!
        budget.rateLimited(second, headers: RateLimitSnapshot(), pause: 0.5, now: 20)
        #expect(budget.pausedUntil == 20.5)
    }

    @Test func headersLowerTheLimitAndSetTheLevel() {
        var budget = budget(tpm: 1_000_000)
        let ticket = budget.reserve(tokens: 100, now: 0).ticket!
        budget.answered(
            ticket,
            headers: RateLimitSnapshot(limitTokens: 120_000, remainingTokens: 50_000),
            counted: true,
            now: 0
        )
        #expect(budget.tokens?.capacity == 120_000)
        #expect(budget.tokens?.level == 50_000)
    }

    @Test func headersCreateABudgetWhenNoneIsConfigured() {
        var budget = RateBudgetStateMachine(requestsPerMinute: nil, tokensPerMinute: nil, now: 0)
        let ticket = budget.reserve(tokens: 1_000_000, now: 0).ticket!
        #expect(budget.reserve(tokens: 1_000_000, now: 0).ticket != nil)
        budget.answered(
            ticket,
            headers: RateLimitSnapshot(
                limitRequests: 3_000,
                limitTokens: 60_000,
                remainingRequests: 10,
                remainingTokens: 600
            ),
            counted: true,
            now: 0
        )
        // The second request, sent after the answered one, is taken out of what the provider had left.
        #expect(budget.tokens!.level < 0)
        #expect(budget.reserve(tokens: 100, now: 0).ticket == nil)
    }

    @Test func anAnswerNotCountedGivesBackWhatTheRequestTook() {
        var budget = budget(tpm: 600)
        let ticket = budget.reserve(tokens: 600, now: 0).ticket!
        budget.answered(ticket, headers: RateLimitSnapshot(), counted: false, now: 0)
        #expect(budget.reserve(tokens: 600, now: 0).ticket != nil)
    }

    @Test func aResetGivesBackWhatTheRequestTookAndATimeoutDoesNot() {
        var budget = budget(tpm: 600)
        let reset = budget.reserve(tokens: 600, now: 0).ticket!
        budget.failed(reset, counted: false, now: 0)
        let timeout = budget.reserve(tokens: 600, now: 0).ticket!
        budget.failed(timeout, counted: true, now: 0)
        #expect(budget.reserve(tokens: 600, now: 0).ticket == nil)
    }

    // MARK: Until the first answer

    @Test func untilTheFirstAnswerOneRequestAtATime() {
        var budget = RateBudgetStateMachine(requestsPerMinute: 3_000, tokensPerMinute: 60_000, now: 0)
        let probe = budget.reserve(tokens: 1_000, now: 0).ticket!
        #expect(budget.reserve(tokens: 1_000, now: 0) == .waitForAnswer)
        #expect(budget.reserve(tokens: 1_000, now: 0.1) == .waitForAnswer)
        budget.answered(probe, headers: RateLimitSnapshot(), counted: true, now: 0.3)
        for _ in 0..<5 { #expect(budget.reserve(tokens: 1_000, now: 0.3).ticket != nil) }
    }

    @Test func aFirstRequestWithoutAnAnswerLetsTheNextOneGoAlone() {
        var budget = RateBudgetStateMachine(requestsPerMinute: nil, tokensPerMinute: 60_000, now: 0)
        let probe = budget.reserve(tokens: 1_000, now: 0).ticket!
        budget.failed(probe, counted: false, now: 0.1)
        #expect(budget.reserve(tokens: 1_000, now: 0.2).ticket != nil)
        #expect(budget.reserve(tokens: 1_000, now: 0.2) == .waitForAnswer)
    }

    @Test func aDrainedProviderIsFollowedFromTheFirstAnswer() {
        // 1,000 tokens/s; the provider's bucket is empty (another run used it), ours starts full.
        var budget = RateBudgetStateMachine(requestsPerMinute: nil, tokensPerMinute: 60_000, now: 0)
        let probe = budget.reserve(tokens: 1_000, now: 0).ticket!
        budget.rateLimited(
            probe,
            headers: RateLimitSnapshot(limitTokens: 60_000, remainingTokens: 0),
            pause: 1,
            now: 0.25
        )
        // The retry goes when the provider has its 1,000 tokens, and only then.
        #expect(budget.reserve(tokens: 1_000, now: 1).ticket == nil)
        #expect(budget.reserve(tokens: 1_000, now: 1.25).ticket != nil)
        #expect(budget.reserve(tokens: 1_000, now: 1.25).ticket == nil)
    }

    // MARK: Following the provider's level

    @Test func anAnswerReplaysWhatWasSentSinceItsRequest() throws {
        var budget = budget(tpm: 60_000)  // 1,000 tokens/s
        let first = budget.reserve(tokens: 10_000, now: 0).ticket!
        #expect(budget.reserve(tokens: 10_000, now: 0.1).ticket != nil)
        #expect(budget.reserve(tokens: 10_000, now: 0.2).ticket != nil)
        // The provider had 45,000 left after the first request (less than our 50,000): the two sent
        // since come off that, plus the refill from the first one's admission.
        budget.answered(first, headers: RateLimitSnapshot(remainingTokens: 45_000), counted: true, now: 0.5)
        let expected = 45_000 + (0.5 - RateBudgetStateMachine.admissionAllowance) * 1_000 - 20_000
        #expect(abs(try #require(budget.tokens?.level) - expected) < 0.01)
    }

    @Test func anAnswerRaisesTheLevelWhenTheProviderHasMoreLeft() throws {
        // A request that timed out was never counted by the provider; the next answer says so.
        var budget = budget(tpm: 60_000)
        let lost = budget.reserve(tokens: 30_000, now: 0).ticket!
        let next = budget.reserve(tokens: 30_000, now: 0).ticket!
        budget.failed(lost, counted: true, now: 1)
        #expect(budget.reserve(tokens: 20_000, now: 1).ticket == nil)
        budget.answered(next, headers: RateLimitSnapshot(remainingTokens: 30_000), counted: true, now: 1)
        #expect(budget.reserve(tokens: 20_000, now: 1).ticket != nil)
    }

    @Test func aFailureAfterTheAnsweredRequestIsNotCountedTwice() throws {
        var budget = budget(tpm: 60_000)
        let answered = budget.reserve(tokens: 10_000, now: 0).ticket!
        let reset = budget.reserve(tokens: 10_000, now: 0).ticket!
        // The reset gives its share back, and the answer's replay leaves it out: 50,000 + refill, once.
        budget.failed(reset, counted: false, now: 0.2)
        budget.answered(answered, headers: RateLimitSnapshot(remainingTokens: 50_000), counted: true, now: 0.3)
        let expected = 50_000 + (0.3 - RateBudgetStateMachine.admissionAllowance) * 1_000
        #expect(abs(try #require(budget.tokens?.level) - expected) < 0.01)
    }

    @Test func theLedgerKeepsOnlyWhatAnAnswerMayStillReportOn() {
        var budget = budget(tpm: 60_000)
        let first = budget.reserve(tokens: 1, now: 0).ticket!
        let second = budget.reserve(tokens: 1, now: 0).ticket!
        let third = budget.reserve(tokens: 1, now: 0).ticket!
        budget.answered(second, headers: RateLimitSnapshot(), counted: true, now: 0)
        #expect(budget.ledger.entries.count == 3)
        budget.answered(first, headers: RateLimitSnapshot(), counted: true, now: 0)
        #expect(budget.ledger.entries.map(\.ticket) == [third.value])
        budget.failed(third, counted: false, now: 0)
        #expect(budget.ledger.entries.isEmpty)
    }
}
