import SluiceCore
import SluiceHTTP

extension RetryPolicy {
    /// The remote sources' policy (S3, http): `max_retries` retries (a rate limit counts against the same
    /// limit), backoff from 200 ms up to 20 s, a server's `Retry-After` honoured up to two minutes.
    static func source(maxRetries: Int) -> RetryPolicy {
        RetryPolicy(
            maxRetries: maxRetries,
            backoff: Backoff(base: .milliseconds(200), cap: .seconds(20)),
            maxRetryAfter: HTTPResponse.defaultRetryAfterCap
        )
    }
}
