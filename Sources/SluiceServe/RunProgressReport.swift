import SluiceCore

/// One run started through `POST /v1/runs`, as `GET /v1/runs/{id}` shows it (docs/openapi.json, `Run`).
struct RunProgressReport: Sendable, Encodable {
    var id: String
    /// `running` or `finished`.
    var state: String
    var startedAt: Double
    var endedAt: Double?
    /// Documents upserted, skipped or failed so far.
    var documentsDone = 0
    /// The documents of the run, once the scan has counted them.
    var documentsTotal: Int?
    var elapsedSeconds = 0.0
    /// The statistics so far (the phase table is `stats.phases`).
    var stats: RunStats?
    /// Once finished: `success`, `documents-failed`, `interrupted`, `provider-refused` or the error's code.
    var outcome: String?
    /// Once finished: the exit code `sluice run` would have exited with (nil when a signal killed it).
    var exitCode: Int32?
    /// Once finished: the signal that killed the child `sluice run` (outcome `killed`), if one did.
    var signal: Int32?
    /// Once finished with an error: what stopped it.
    var error: String?

    enum CodingKeys: String, CodingKey {
        case id, state, stats, outcome, error, signal
        case startedAt = "started_at"
        case endedAt = "ended_at"
        case documentsDone = "documents_done"
        case documentsTotal = "documents_total"
        case elapsedSeconds = "elapsed_s"
        case exitCode = "exit_code"
    }

    /// The outcome of a run killed by a signal.
    static let killed = "killed"

    static func outcome(of code: RunExitCode) -> String {
        switch code {
        case .success: "success"
        case .documentsFailed: "documents-failed"
        case .interrupted: "interrupted"
        case .providerRefused: "provider-refused"
        case .lockHeld: "lock-held"
        case .dependencyUnavailable: "dependency-unavailable"
        case .deletionRefused: "deletion-refused"
        case .usage: "usage"
        default: "error"
        }
    }
}
