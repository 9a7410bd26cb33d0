extension HTTPClient {
    /// Settings of one client; every request it sends shares them (and its connection pool).
    package struct Configuration: Sendable, Hashable {
        /// The limit for establishing a connection (TCP and TLS).
        package var connectTimeout: Duration = .seconds(10)
        /// The limit for a whole exchange when the request names none.
        package var timeout: Duration = .seconds(120)
        /// A PEM file of CA certificates to verify servers with instead of the system store.
        package var caBundlePath: String?
        /// The largest response body accepted; a larger one fails with `too-large`.
        package var maxResponseBytes: Int = 256 << 20
        /// The most connections kept open per host (0: libcurl's default).
        package var maxConnectionsPerHost: Int = 0
        /// The most idle connections kept for reuse.
        package var maxCachedConnections: Int = 64
        /// Sent as `User-Agent`.
        package var userAgent: String = "sluice"

        package init() {}
    }
}
