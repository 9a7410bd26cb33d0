import SluiceCore

/// What lets an attempt of a ``RemoteCall`` leave, and what it learns when the attempt is over: a rate
/// budget with a concurrency limit (the remote embedders, the reranker, the image captioner), or nothing
/// (``OpenGate``: the answer model, the S3 and web sources).
package protocol RemoteCallGate: Sendable {
    /// What one admitted attempt holds until it is released.
    associatedtype Permit: Sendable

    /// Waits until an attempt of `cost` (tokens; 0 where none are counted) may leave.
    ///
    /// - Throws: What the wait throws (cancellation, a shutdown).
    func admit(cost: Int) async throws -> Permit

    /// Gives an admitted attempt's place back, saying how it went.
    func release(_ permit: Permit, _ release: RemoteCallRelease)
}

/// How an admitted attempt ended, for its ``RemoteCallGate``.
package enum RemoteCallRelease: Sendable, Hashable {
    /// The server answered; `counted`: whether the provider counted the request against its limits.
    case answered(headers: [String: String], counted: Bool, load: RemoteCallLoad)
    /// The server's rate limit: the whole gate pauses for `pause` (zero when the retries are spent).
    case rateLimited(headers: [String: String], pause: Duration)
    /// No answer (a reset, a refused connection, a timeout); `counted` when it may have reached the server.
    case unanswered(counted: Bool, load: RemoteCallLoad)
}

/// What an attempt says of the server's load, for an adaptive concurrency limit.
package enum RemoteCallLoad: Sendable, Hashable {
    /// Answered well: room for one more.
    case success
    /// Says nothing about the load.
    case neutral
    /// A timeout or a rate limit: fewer at once.
    case overloaded
}

/// The gate of a client without a rate budget or a concurrency limit: every attempt leaves at once.
package struct OpenGate: RemoteCallGate {
    package init() {}

    package func admit(cost: Int) async throws {}

    package func release(_ permit: Void, _ release: RemoteCallRelease) {}
}
