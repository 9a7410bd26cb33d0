/// How a client that talks to a remote service retries: the one policy of the embedders, the stores and
/// the answer model (`sluice ask`), carried out by a ``RetryStateMachine`` per request.
///
/// The settings follow one naming rule: `max_retries` counts **retries**, the attempts after the first
/// (`embed.max_retries`, `sink.max_retries`, `answer.max_retries`); `max_retries: 0` tries once.
///
/// A server's own wait — `retry-after-ms`, else `Retry-After` in seconds or as an HTTP date, read by
/// `HTTPResponse.retryAfter(cap:)` — has one meaning everywhere: it **replaces** the computed backoff
/// before the next attempt (it is neither a floor nor ignored), cut to ``maxRetryAfter``. Where the
/// requests of a client share a rate budget (the remote embedders), the server's limit is the key's, not the
/// request's: the whole budget pauses for that wait (``RetryStateMachine/Action/pauseBudget(for:)``).
/// `x-ratelimit-*` headers are not a wait: they keep a shared budget in step with the provider.
package struct RetryPolicy: Sendable, Hashable {
    /// Retries after transient failures (5xx, 408, 409, a reset, a timeout) before giving up.
    package var maxRetries: Int
    /// Retries after rate limits (429) before giving up, counted apart from ``maxRetries``.
    package var maxRateLimitRetries: Int
    /// The delays when the server names none.
    package var backoff: Backoff
    /// The longest server wait honoured; a longer (or absurd) one waits this long.
    package var maxRetryAfter: Duration
    /// Whether the client's requests share a rate budget that a rate limit pauses as a whole.
    package var sharesBudget: Bool

    /// - Parameter maxRateLimitRetries: nil: the same as `maxRetries`.
    package init(
        maxRetries: Int,
        maxRateLimitRetries: Int? = nil,
        backoff: Backoff,
        maxRetryAfter: Duration,
        sharesBudget: Bool = false
    ) {
        self.maxRetries = max(0, maxRetries)
        self.maxRateLimitRetries = max(0, maxRateLimitRetries ?? maxRetries)
        self.backoff = backoff
        self.maxRetryAfter = max(.zero, maxRetryAfter)
        self.sharesBudget = sharesBudget
    }
}
