/// The client-side budget shared by every request of one embedder: requests/minute and tokens/minute as
/// token buckets that refill continuously (a minute's worth of capacity), refined from the provider's
/// `x-ratelimit-*` headers, paused as a whole after a 429.
///
/// Pure: time (seconds on a monotonic clock) comes in as an argument, decisions come out.
struct RateBudgetStateMachine: Sendable {
    struct Bucket: Sendable, Equatable {
        var capacity: Double
        var level: Double
        var stamp: Double

        init(perMinute: Int, now: Double) {
            capacity = Double(perMinute)
            level = Double(perMinute)
            stamp = now
        }

        var ratePerSecond: Double { capacity / 60 }

        mutating func refill(now: Double) {
            if now > stamp { level = min(capacity, level + (now - stamp) * ratePerSecond) }
            stamp = max(stamp, now)
        }

        /// Seconds until `amount` can be taken. More than the capacity is taken from a full bucket (the
        /// level goes negative) so that an oversized request is slowed, never stuck.
        func wait(for amount: Double) -> Double {
            let needed = min(amount, capacity)
            return level >= needed ? 0 : (needed - level) / ratePerSecond
        }
    }

    enum Decision: Equatable, Sendable {
        /// Send now; the request and its tokens are taken from the budget.
        case proceed
        /// Ask again at this time.
        case wait(until: Double)
    }

    private(set) var requests: Bucket?
    private(set) var tokens: Bucket?
    /// No request starts before this time (after a 429).
    private(set) var pausedUntil: Double = 0
    /// Whether the limits came from the configuration (headers may lower them) or only from headers.
    private let configuredRequests: Bool
    private let configuredTokens: Bool

    init(requestsPerMinute: Int?, tokensPerMinute: Int?, now: Double) {
        requests = requestsPerMinute.map { Bucket(perMinute: $0, now: now) }
        tokens = tokensPerMinute.map { Bucket(perMinute: $0, now: now) }
        configuredRequests = requestsPerMinute != nil
        configuredTokens = tokensPerMinute != nil
    }

    /// Takes one request and `cost` tokens if both buckets allow it now.
    mutating func reserve(tokens cost: Int, now: Double) -> Decision {
        if now < pausedUntil { return .wait(until: pausedUntil) }
        requests?.refill(now: now)
        tokens?.refill(now: now)
        let wait = max(requests?.wait(for: 1) ?? 0, tokens?.wait(for: Double(cost)) ?? 0)
        if wait > 0 { return .wait(until: now + wait) }
        requests?.level -= 1
        tokens?.level -= Double(cost)
        return .proceed
    }

    /// Gives back what a request that the provider rejected without counting took.
    mutating func refund(tokens cost: Int, now: Double) {
        requests?.refill(now: now)
        tokens?.refill(now: now)
        if var bucket = requests {
            bucket.level = min(bucket.capacity, bucket.level + 1)
            requests = bucket
        }
        if var bucket = tokens {
            bucket.level = min(bucket.capacity, bucket.level + Double(cost))
            tokens = bucket
        }
    }

    /// A 429: nothing starts before `retryAfter` (or `fallback` when the provider gave none) and the
    /// buckets are taken as empty — the provider's are, whatever ours said.
    mutating func rateLimited(retryAfter: Double?, fallback: Double, now: Double) {
        pausedUntil = max(pausedUntil, now + (retryAfter ?? fallback))
        requests?.refill(now: now)
        tokens?.refill(now: now)
        if requests != nil { requests!.level = min(requests!.level, 0) }
        if tokens != nil { tokens!.level = min(tokens!.level, 0) }
    }

    /// Refines the budget from an answer's `x-ratelimit-*` headers: a lower limit than configured (or any
    /// limit when none was) is adopted, and a provider that has less left than we think wins.
    mutating func observe(_ snapshot: RateLimitSnapshot, now: Double) {
        if let limit = snapshot.limitRequests, limit > 0 {
            requests = adopt(
                limit: limit,
                remaining: snapshot.remainingRequests,
                into: requests,
                configured: configuredRequests,
                now: now
            )
        } else if let remaining = snapshot.remainingRequests, requests != nil {
            requests!.refill(now: now)
            requests!.level = min(requests!.level, Double(remaining))
        }
        if let limit = snapshot.limitTokens, limit > 0 {
            tokens = adopt(
                limit: limit,
                remaining: snapshot.remainingTokens,
                into: tokens,
                configured: configuredTokens,
                now: now
            )
        } else if let remaining = snapshot.remainingTokens, tokens != nil {
            tokens!.refill(now: now)
            tokens!.level = min(tokens!.level, Double(remaining))
        }
    }

    private func adopt(limit: Int, remaining: Int?, into bucket: Bucket?, configured: Bool, now: Double) -> Bucket {
        guard var bucket else {
            var fresh = Bucket(perMinute: limit, now: now)
            if let remaining { fresh.level = Double(remaining) }
            return fresh
        }
        bucket.refill(now: now)
        if Double(limit) < bucket.capacity || !configured {
            bucket.capacity = Double(limit)
            bucket.level = min(bucket.level, bucket.capacity)
        }
        if let remaining { bucket.level = min(bucket.level, Double(remaining)) }
        return bucket
    }
}
