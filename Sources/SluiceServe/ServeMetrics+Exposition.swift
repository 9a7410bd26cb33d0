import Foundation
import Synchronization

extension ServeMetrics {
    /// The Prometheus text exposition (format 0.0.4) of the counters, plus the store's size and the index
    /// generations (`role`: active, candidate, previous; none before generations are used).
    func exposition(
        documents: Int?,
        vectors: Int?,
        generations: [(role: String, generation: String)] = []
    ) -> String {
        let state = state.withLock { $0 }
        var out = ""
        out += "# HELP sluice_http_requests_total HTTP requests answered, by route and status.\n"
        out += "# TYPE sluice_http_requests_total counter\n"
        for (key, count) in state.requests.sorted(by: { $0.key < $1.key }) {
            out += "sluice_http_requests_total{route=\"\(Self.escape(key.route))\",status=\"\(key.status)\"} \(count)\n"
        }
        out += "# HELP sluice_http_request_duration_seconds Time to answer, by route.\n"
        out += "# TYPE sluice_http_request_duration_seconds histogram\n"
        for (route, latency) in state.latency.sorted(by: { $0.key < $1.key }) {
            let label = "route=\"\(Self.escape(route))\""
            var cumulative: UInt64 = 0
            for (bound, count) in zip(Self.bucketBounds, latency.buckets) {
                cumulative += count
                out += "sluice_http_request_duration_seconds_bucket{\(label),le=\"\(bound)\"} \(cumulative)\n"
            }
            out += "sluice_http_request_duration_seconds_bucket{\(label),le=\"+Inf\"} \(latency.count)\n"
            out += "sluice_http_request_duration_seconds_sum{\(label)} \(latency.sum)\n"
            out += "sluice_http_request_duration_seconds_count{\(label)} \(latency.count)\n"
        }
        out += "# HELP sluice_runs_started_total Runs started through POST /v1/runs.\n"
        out += "# TYPE sluice_runs_started_total counter\n"
        out += "sluice_runs_started_total \(state.runsStarted)\n"
        out += "# HELP sluice_runs_finished_total Runs finished, by outcome.\n"
        out += "# TYPE sluice_runs_finished_total counter\n"
        for (outcome, count) in state.runsFinished.sorted(by: { $0.key < $1.key }) {
            out += "sluice_runs_finished_total{outcome=\"\(Self.escape(outcome))\"} \(count)\n"
        }
        out +=
            "# HELP sluice_auth_failures_total Credentials refused (401) and routes outside a credential's scopes (403), by reason.\n"
        out += "# TYPE sluice_auth_failures_total counter\n"
        for failure in AuthenticationFailure.allCases {
            out +=
                "sluice_auth_failures_total{reason=\"\(failure.rawValue)\"} \(state.authenticationFailures[failure] ?? 0)\n"
        }
        if let documents {
            out += "# HELP sluice_documents Documents the checkpoint tracks.\n# TYPE sluice_documents gauge\n"
            out += "sluice_documents \(documents)\n"
        }
        if let vectors {
            out += "# HELP sluice_vectors Vectors in the store.\n# TYPE sluice_vectors gauge\n"
            out += "sluice_vectors \(vectors)\n"
        }
        if !generations.isEmpty {
            out += "# HELP sluice_generation_info The index generations, by role (docs/GENERATIONS.md).\n"
            out += "# TYPE sluice_generation_info gauge\n"
            for (role, generation) in generations {
                out += "sluice_generation_info{role=\"\(role)\",generation=\"\(Self.escape(generation))\"} 1\n"
            }
        }
        return out
    }

    /// A label value: backslash, quote and newline escaped.
    static func escape(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
