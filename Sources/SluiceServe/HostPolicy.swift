import SluiceCore

/// Which `Host` headers a loopback-bound server answers: its loopback names with its own port, and the names
/// of `serve.allowed_hosts`. A web page that rebinds its own name to 127.0.0.1 still sends that name, so
/// checking `Host` is what keeps other sites from reading a token-less loopback server (docs/SERVE.md).
struct HostPolicy: Sendable {
    /// `name` (any port) or `name:port` entries, lower-cased.
    let allowed: [(host: String, port: Int?)]

    init(allowedHosts: [String]) {
        allowed = allowedHosts.compactMap { entry in
            LoopbackAddress.splitHostPort(entry.lowercased()).map { ($0.host, $0.port) }
        }
    }

    /// Whether a request with `Host: value` (nil: none, as HTTP/1.0 tools send) may reach the routes of a
    /// server bound to loopback on `port`.
    func allows(_ value: String?, port: Int) -> Bool {
        // No Host at all: no browser sends such a request.
        guard let value else { return true }
        guard let (host, given) = LoopbackAddress.splitHostPort(value.lowercased()) else { return false }
        if LoopbackAddress.contains(host) { return (given ?? 80) == port }
        return allowed.contains { $0.host == host && ($0.port == nil || $0.port == given) }
    }
}
