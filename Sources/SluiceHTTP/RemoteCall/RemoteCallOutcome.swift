import SluiceCore

/// What one attempt of a ``RemoteCall`` came to, as its caller read the answer. A transport failure is
/// not an outcome: the attempt throws it, and the loop classifies it (``RemoteCall``).
package enum RemoteCallOutcome<Value: Sendable>: Sendable {
    /// The call is over with `value`: a 2xx, or an answer the caller handles itself (a batch too large to
    /// send, which it splits; a web page's 404). `counted`: whether the provider counted the request.
    case finished(Value, headers: [String: String] = [:], counted: Bool = true)
    /// Worth another attempt, as the ``RetryPolicy`` says: a 5xx, 408, a throttling answer, a stream cut
    /// before any text. The wait the server named is read from `headers` (``HTTPResponse/retryAfter(cap:now:)``).
    case retry(RemoteCallRetry, reason: String, headers: [String: String] = [:])
    /// Not worth another attempt (a bad request, an answer the client cannot read): `error` is thrown as
    /// it is. An error coded ``SluiceError/Code/providerRefused`` (credentials, quota) also refuses every
    /// later attempt of the call's owner at once, without a request.
    case stop(any Error, headers: [String: String] = [:])
}

/// The two kinds of retryable failure, counted apart by the ``RetryStateMachine``.
package enum RemoteCallRetry: Sendable, Hashable {
    /// 5xx, 408, 409, a stream cut short.
    case transient
    /// The server's rate limit (429, a throttling code, a full queue).
    case rateLimited
}
