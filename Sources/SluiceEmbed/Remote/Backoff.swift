/// Exponential backoff with full jitter: the n-th retry waits a uniformly random time in
/// [0, min(cap, base · 2ⁿ)] (AWS's "full jitter"), so clients that failed together do not retry together.
struct Backoff: Sendable {
    var base: Duration
    var cap: Duration

    /// The delay before retry `attempt` (0 for the first retry), for a `unit` drawn uniformly from [0, 1).
    func delay(attempt: Int, unit: Double) -> Duration {
        let ceiling = min(cap, base * Double(1 << min(attempt, 30)))
        return ceiling * max(0, min(1, unit))
    }
}
