import Synchronization

/// The per-identity request budget of `sluice serve` (`serve.rate_limit_per_minute`, a key's own
/// `rate_limit_per_minute`; docs/ACCESS.md): a token bucket per key or JWT principal, so one caller's
/// burst never counts against another's. A bucket holds a minute's worth of requests and refills evenly
/// over the minute.
struct RateBudget: Sendable {
    struct Bucket: Sendable {
        var tokens: Double
        var updated: Double
        var capacity: Double
    }

    enum Decision: Equatable, Sendable {
        case allowed
        /// Refused: a request is possible again after this many whole seconds (`Retry-After`).
        case limited(retryAfterSeconds: Int)
    }

    private(set) var buckets: [String: Bucket] = [:]
    /// Above this many buckets, the full ones are dropped (a full bucket is the same as none).
    var pruneAbove = 4096

    /// Takes one request from `who`'s bucket at `now` (seconds of a monotonic clock).
    mutating func take(_ who: String, perMinute: Int, now: Double) -> Decision {
        guard perMinute > 0 else { return .allowed }
        let capacity = Double(perMinute)
        let rate = capacity / 60
        var bucket = buckets[who] ?? Bucket(tokens: capacity, updated: now, capacity: capacity)
        bucket.tokens = min(capacity, bucket.tokens + max(0, now - bucket.updated) * rate)
        bucket.updated = now
        bucket.capacity = capacity
        let decision: Decision
        // A nanotoken of slack: refills computed in floating point land a hair below whole requests.
        if bucket.tokens >= 1 - 1e-9 {
            bucket.tokens -= 1
            decision = .allowed
        } else {
            decision = .limited(retryAfterSeconds: max(1, Int(((1 - bucket.tokens) / rate - 1e-6).rounded(.up))))
        }
        buckets[who] = bucket
        if buckets.count > pruneAbove { prune(now: now) }
        return decision
    }

    /// Drops the buckets that are full again by `now`.
    mutating func prune(now: Double) {
        buckets = buckets.filter { _, bucket in
            now - bucket.updated < (bucket.capacity - bucket.tokens) / (bucket.capacity / 60)
        }
    }
}

/// The ``RateBudget`` shared by every request, over a monotonic clock.
final class RateLimiter: Sendable {
    /// The requests per minute of an identity without its own limit (0: none).
    let defaultPerMinute: Int
    private let budget = Mutex(RateBudget())
    private let start = ContinuousClock.now

    init(defaultPerMinute: Int) { self.defaultPerMinute = defaultPerMinute }

    /// One request of `identity`; identities not limited (the operator, anonymous callers) always pass.
    func take(_ identity: RequestIdentity) -> RateBudget.Decision {
        guard let who = identity.limitedAs else { return .allowed }
        let perMinute = identity.rateLimitPerMinute ?? defaultPerMinute
        let elapsed = (ContinuousClock.now - start).components
        let now = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
        return budget.withLock { $0.take(who, perMinute: perMinute, now: now) }
    }
}
