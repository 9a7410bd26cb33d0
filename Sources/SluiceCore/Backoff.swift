/// Exponential backoff with full jitter, as a pure value: the n-th retry waits a uniformly random time
/// in [0, min(cap, base · 2ⁿ)] (AWS's "full jitter"), so clients that failed together do not retry
/// together.
///
/// The one backoff of Sluice: ``RetryStateMachine`` draws from it the delays of every client that retries
/// (the remote embedders, the stores, the answer model) when the server names no wait. As in
/// async-http-client's connection-pool backoff, the ceiling is capped before anything is converted, so no
/// attempt count overflows. The caller supplies the random draw, so the delays are testable without a
/// clock or a random source.
package struct Backoff: Sendable, Hashable {
    /// The ceiling of the first retry's delay.
    package var base: Duration
    /// The largest ceiling, however many retries came before.
    package var cap: Duration

    package init(base: Duration, cap: Duration) {
        self.base = base
        self.cap = cap
    }

    /// The delay before retry `attempt` (0 for the first retry), for a `unit` drawn uniformly from
    /// [0, 1); `unit` is clamped to [0, 1].
    package func delay(attempt: Int, unit: Double) -> Duration {
        // 2³⁰ · base passes any sensible cap; the bound keeps the shift (and the product) finite.
        let ceiling = min(cap, base * Double(1 << min(max(0, attempt), 30)))
        return ceiling * max(0, min(1, unit))
    }
}
