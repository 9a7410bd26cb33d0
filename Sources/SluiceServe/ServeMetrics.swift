import Synchronization

/// The service's counters for `GET /metrics`: requests by route and status, a latency histogram by
/// route, runs started and finished by outcome. Written by hand in Prometheus' text format
/// (``ServeMetrics/exposition(documents:vectors:)``) rather than through swift-prometheus: a dozen series
/// need no registry, and the format stays visible in one file (docs/SERVE.md, "Metrics").
final class ServeMetrics: Sendable {
    /// Upper bounds of the latency buckets, in seconds.
    static let bucketBounds: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    struct Latency {
        var buckets: [UInt64] = Array(repeating: 0, count: ServeMetrics.bucketBounds.count)
        var count: UInt64 = 0
        var sum: Double = 0
    }

    struct RequestKey: Hashable, Comparable {
        var route: String
        var status: Int
        static func < (a: RequestKey, b: RequestKey) -> Bool { (a.route, a.status) < (b.route, b.status) }
    }

    struct State {
        var requests: [RequestKey: UInt64] = [:]
        var latency: [String: Latency] = [:]
        var runsStarted: UInt64 = 0
        var runsFinished: [String: UInt64] = [:]
        var authenticationFailures: [AuthenticationFailure: UInt64] = [:]
    }

    let state = Mutex(State())

    func recordRequest(route: String, status: Int, seconds: Double) {
        state.withLock { state in
            state.requests[RequestKey(route: route, status: status), default: 0] += 1
            var latency = state.latency[route] ?? Latency()
            latency.count += 1
            latency.sum += seconds
            if let index = Self.bucketBounds.firstIndex(where: { seconds <= $0 }) { latency.buckets[index] += 1 }
            state.latency[route] = latency
        }
    }

    /// A credential refused (401) or a route outside its scopes (403): counted by reason, never by who.
    func recordAuthenticationFailure(_ failure: AuthenticationFailure) {
        state.withLock { $0.authenticationFailures[failure, default: 0] += 1 }
    }

    func recordRunStarted() { state.withLock { $0.runsStarted += 1 } }

    /// `outcome`: `success`, `documents-failed`, `interrupted`, `error`.
    func recordRunFinished(outcome: String) { state.withLock { $0.runsFinished[outcome, default: 0] += 1 } }
}
