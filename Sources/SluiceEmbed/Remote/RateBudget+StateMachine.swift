/// The client-side budget shared by every request of one embedder: requests/minute and tokens/minute as
/// token buckets that refill continuously (a minute's worth of capacity), kept in step with the
/// provider's `x-ratelimit-*` headers, paused as a whole after a 429.
///
/// - Every request takes a ``Ticket`` and is settled once: answered (with the headers), rate limited, or
///   failed without an answer. An answer's `remaining-*` is the provider's level when it admitted that
///   request; the ``RateBudgetLedger`` replays what was sent since, so the budget paces to what the
///   provider has left, whether that is less than assumed or more.
/// - A request the provider did not count (a 429, a 5xx, a reset) gives its share back, so a retry does
///   not pay twice.
/// - Until the first answer, one request at a time: the provider's bucket may not be full (a restart
///   after another run), and a burst against an empty one is a burst of 429s.
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

        /// Returns `amount` taken earlier (a request the provider did not count), up to the capacity.
        mutating func giveBack(_ amount: Double, now: Double) {
            refill(now: now)
            level = min(capacity, level + amount)
        }

        /// Seconds until `amount` can be taken. More than the capacity is taken from a full bucket (the
        /// level goes negative) so that an oversized request is slowed, never stuck.
        func wait(for amount: Double) -> Double {
            let needed = min(amount, capacity)
            return level >= needed ? 0 : (needed - level) / ratePerSecond
        }
    }

    /// One reservation, settled exactly once.
    struct Ticket: Sendable, Hashable {
        let value: Int
    }

    enum Decision: Equatable, Sendable {
        /// Send now; the request and its tokens are taken from the budget.
        case proceed(Ticket)
        /// Ask again at this time.
        case wait(until: Double)
        /// Ask again once the request in flight is settled (the first answer is awaited).
        case waitForAnswer

        var ticket: Ticket? {
            if case .proceed(let ticket) = self { return ticket }
            return nil
        }
    }

    /// How much later than its reservation a request is taken to reach the provider: the refill replayed
    /// from an answer starts this long after the request was sent, so the estimate errs low by about
    /// `admissionAllowance` seconds of refill (a constant that costs that many tokens once, not a rate).
    static let admissionAllowance = 0.05

    private(set) var requests: Bucket?
    private(set) var tokens: Bucket?
    /// No request starts before this time (after a 429).
    private(set) var pausedUntil: Double = 0
    /// Whether the provider's level is unknown yet (no answer so far), and the requests sent meanwhile.
    private(set) var awaitingFirstAnswer: Bool
    private var inFlightBeforeFirstAnswer = 0
    private(set) var ledger = RateBudgetLedger()
    /// Whether the limits came from the configuration (headers may lower them) or only from headers.
    private let configuredRequests: Bool
    private let configuredTokens: Bool

    /// - Parameter awaitingFirstAnswer: whether the first request goes alone (always, outside tests that
    ///   look at the buckets only).
    init(requestsPerMinute: Int?, tokensPerMinute: Int?, now: Double, awaitingFirstAnswer: Bool = true) {
        requests = requestsPerMinute.map { Bucket(perMinute: $0, now: now) }
        tokens = tokensPerMinute.map { Bucket(perMinute: $0, now: now) }
        configuredRequests = requestsPerMinute != nil
        configuredTokens = tokensPerMinute != nil
        self.awaitingFirstAnswer = awaitingFirstAnswer && (requestsPerMinute != nil || tokensPerMinute != nil)
    }

    /// Takes one request and `cost` tokens if both buckets allow it now.
    mutating func reserve(tokens cost: Int, now: Double) -> Decision {
        if awaitingFirstAnswer, inFlightBeforeFirstAnswer > 0 { return .waitForAnswer }
        if now < pausedUntil { return .wait(until: pausedUntil) }
        requests?.refill(now: now)
        tokens?.refill(now: now)
        let wait = max(requests?.wait(for: 1) ?? 0, tokens?.wait(for: Double(cost)) ?? 0)
        if wait > 0 { return .wait(until: now + wait) }
        requests?.level -= 1
        tokens?.level -= Double(cost)
        if awaitingFirstAnswer { inFlightBeforeFirstAnswer += 1 }
        return .proceed(Ticket(value: ledger.record(tokens: Double(cost), now: now)))
    }

    /// An answer to `ticket` arrived: the budget follows its headers. `counted: false` for an answer the
    /// provider does not count against the limits (a 5xx, a request refused as too large): its share is
    /// given back.
    mutating func answered(_ ticket: Ticket, headers: RateLimitSnapshot, counted: Bool, now: Double) {
        settle(ticket, headers: headers, counted: counted, now: now)
    }

    /// A 429 for `ticket`: not counted by the provider; nothing starts for `pause` seconds (what the
    /// ``RetryStateMachine`` decided: the server's `Retry-After`, else the backoff). A bucket the headers did
    /// not report on is taken as empty — the provider's is, whatever ours said.
    mutating func rateLimited(
        _ ticket: Ticket,
        headers: RateLimitSnapshot,
        pause: Double,
        now: Double
    ) {
        let reported = settle(ticket, headers: headers, counted: false, now: now)
        pausedUntil = max(pausedUntil, now + max(0, pause))
        if !reported.requests, requests != nil { requests!.level = min(requests!.level, 0) }
        if !reported.tokens, tokens != nil { tokens!.level = min(tokens!.level, 0) }
    }

    /// No answer for `ticket` (a reset, a timeout). `counted: false` when the provider cannot have
    /// counted it (the connection failed before an answer could start): its share is given back.
    mutating func failed(_ ticket: Ticket, counted: Bool, now: Double) {
        if awaitingFirstAnswer { inFlightBeforeFirstAnswer = max(0, inFlightBeforeFirstAnswer - 1) }
        if !counted, let entry = ledger.entry(ticket.value) { giveBack(entry.tokens, now: now) }
        ledger.settle(ticket.value, counted: counted)
    }

    /// Settles an answered ticket; returns which buckets the headers set.
    @discardableResult
    private mutating func settle(
        _ ticket: Ticket,
        headers: RateLimitSnapshot,
        counted: Bool,
        now: Double
    ) -> (requests: Bool, tokens: Bool) {
        awaitingFirstAnswer = false
        inFlightBeforeFirstAnswer = 0
        if let limit = headers.limitRequests, limit > 0 {
            requests = adopt(limit: limit, into: requests, configured: configuredRequests, now: now)
        }
        if let limit = headers.limitTokens, limit > 0 {
            tokens = adopt(limit: limit, into: tokens, configured: configuredTokens, now: now)
        }
        var reported = (requests: false, tokens: false)
        if let entry = ledger.entry(ticket.value) {
            let admitted = entry.time + Self.admissionAllowance
            if let bucket = replayed(
                requests,
                remaining: headers.remainingRequests,
                after: ticket,
                admitted: admitted,
                now: now,
                cost: { _ in 1 }
            ) {
                requests = bucket
                reported.requests = true
            }
            if let bucket = replayed(
                tokens,
                remaining: headers.remainingTokens,
                after: ticket,
                admitted: admitted,
                now: now,
                cost: { $0.tokens }
            ) {
                tokens = bucket
                reported.tokens = true
            }
            if !counted {
                // What the headers did not report on gets the request's share back.
                if !reported.requests { requests?.giveBack(1, now: now) }
                if !reported.tokens { tokens?.giveBack(entry.tokens, now: now) }
            }
        }
        ledger.settle(ticket.value, counted: counted)
        return reported
    }

    private mutating func giveBack(_ cost: Double, now: Double) {
        requests?.giveBack(1, now: now)
        tokens?.giveBack(cost, now: now)
    }

    /// `bucket` at the level an answer reports: `remaining` when the provider admitted `ticket`'s request
    /// (at `admitted`), less what was reserved since (each entry's `cost` to this bucket), plus the refill.
    /// Nil when there is no such bucket, the answer does not report on it, or the ticket is not in the ledger.
    private func replayed(
        _ bucket: Bucket?,
        remaining: Int?,
        after ticket: Ticket,
        admitted: Double,
        now: Double,
        cost: (RateBudgetLedger.Entry) -> Double
    ) -> Bucket? {
        guard var bucket, let remaining,
            let level = ledger.replay(
                after: ticket.value,
                remaining: Double(remaining),
                admitted: admitted,
                capacity: bucket.capacity,
                ratePerSecond: bucket.ratePerSecond,
                now: now,
                cost: cost
            )
        else { return nil }
        bucket.refill(now: now)
        bucket.level = level
        return bucket
    }

    /// A lower limit than configured (or any limit when none was) is adopted.
    private func adopt(limit: Int, into bucket: Bucket?, configured: Bool, now: Double) -> Bucket {
        guard var bucket else { return Bucket(perMinute: limit, now: now) }
        bucket.refill(now: now)
        if Double(limit) < bucket.capacity || !configured {
            bucket.capacity = Double(limit)
            bucket.level = min(bucket.level, bucket.capacity)
        }
        return bucket
    }
}
