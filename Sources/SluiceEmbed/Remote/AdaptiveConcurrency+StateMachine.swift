/// Additive-increase/multiplicative-decrease concurrency: the limit grows by about one per round of
/// successful requests and halves on a sign of overload (429, full queue, timeout), at most once per
/// `decreaseInterval` so one burst of failures counts once. Stays within 1…`maximum`.
///
/// Pure: time (seconds) comes in as an argument.
struct AdaptiveConcurrencyStateMachine: Sendable {
    enum Outcome: Sendable { case success, overloaded, neutral }

    let maximum: Int
    let decreaseInterval: Double
    private(set) var limit: Double
    private(set) var inFlight = 0
    private var lastDecrease = -Double.infinity

    init(maximum: Int, initial: Int? = nil, decreaseInterval: Double = 1) {
        precondition(maximum >= 1)
        self.maximum = maximum
        self.decreaseInterval = decreaseInterval
        limit = Double(min(maximum, max(1, initial ?? maximum)))
    }

    /// Takes a slot if the limit allows.
    mutating func tryAcquire() -> Bool {
        guard inFlight < Int(limit) else { return false }
        inFlight += 1
        return true
    }

    /// Returns a slot and adapts the limit; returns how many waiters may now try again.
    mutating func release(_ outcome: Outcome, now: Double) -> Int {
        inFlight -= 1
        switch outcome {
        case .success:
            limit = min(Double(maximum), limit + 1 / limit)
        case .overloaded:
            if now - lastDecrease >= decreaseInterval {
                limit = max(1, (limit / 2).rounded(.down))
                lastDecrease = now
            }
        case .neutral:
            break
        }
        return max(0, Int(limit) - inFlight)
    }
}
