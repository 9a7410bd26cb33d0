import Testing

@testable import SluiceServe

/// The per-identity request budget (issue 36): a minute's requests at once, then one per 60/limit
/// seconds; each identity apart.
@Suite struct RateBudgetTests {
    @Test func aBurstOfTheLimitThenRetryAfter() {
        var budget = RateBudget()
        for _ in 0..<6 { #expect(budget.take("key:a", perMinute: 6, now: 100) == .allowed) }
        // Six a minute: one more every 10 s.
        #expect(budget.take("key:a", perMinute: 6, now: 100) == .limited(retryAfterSeconds: 10))
        #expect(budget.take("key:a", perMinute: 6, now: 104) == .limited(retryAfterSeconds: 6))
        #expect(budget.take("key:a", perMinute: 6, now: 110) == .allowed)
        #expect(budget.take("key:a", perMinute: 6, now: 110.5) == .limited(retryAfterSeconds: 10))
        // A refused request takes nothing: after a minute of waiting the whole burst is back.
        for _ in 0..<6 { #expect(budget.take("key:a", perMinute: 6, now: 175) == .allowed) }
    }

    @Test func identitiesAreCountedApart() {
        var budget = RateBudget()
        for _ in 0..<3 { #expect(budget.take("key:a", perMinute: 3, now: 0) == .allowed) }
        #expect(budget.take("key:a", perMinute: 3, now: 0) != .allowed)
        for _ in 0..<3 { #expect(budget.take("jwt:a", perMinute: 3, now: 0) == .allowed) }
        #expect(budget.take("key:b", perMinute: 0, now: 0) == .allowed, "0: no limit")
    }

    @Test func fullBucketsAreDropped() {
        var budget = RateBudget()
        budget.pruneAbove = 10
        for index in 0..<10 { _ = budget.take("key:\(index)", perMinute: 60, now: 0) }
        #expect(budget.buckets.count == 10)
        // A second later every bucket is full again: the eleventh take drops them all but itself.
        _ = budget.take("key:new", perMinute: 60, now: 1.5)
        #expect(budget.buckets.count == 1)
        _ = budget.take("key:new", perMinute: 60, now: 1.5)
        #expect(budget.take("key:new", perMinute: 60, now: 1.5) == .allowed)
    }
}
