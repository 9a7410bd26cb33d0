/// A run started by `POST /v1/runs`, as `GET /v1/runs/{id}` reports it.
public struct Run: Sendable, Hashable, Codable {
    public var id: String
    /// `running` or `finished`.
    public var state: String
    public var startedAt: Double
    public var endedAt: Double?
    public var documentsDone: Int
    public var documentsTotal: Int?
    public var elapsedSeconds: Double
    /// `success`, `documents-failed`, `interrupted`, `provider-refused`, `killed` (by a signal), or an error's code.
    public var outcome: String?
    /// The exit code `sluice run` would have exited with (nil when a signal killed it).
    public var exitCode: Int?
    /// The signal that killed the run's process (outcome `killed`), if one did.
    public var signal: Int?
    /// What stopped a run that ended in an error.
    public var error: String?
    /// The run's statistics, with the phase table under `phases` (the shape of `sluice run --stats-json`).
    public var stats: JSONValue?

    public var isFinished: Bool { state == "finished" }

    enum CodingKeys: String, CodingKey {
        case id, state, outcome, stats, signal, error
        case startedAt = "started_at"
        case endedAt = "ended_at"
        case documentsDone = "documents_done"
        case documentsTotal = "documents_total"
        case elapsedSeconds = "elapsed_s"
        case exitCode = "exit_code"
    }
}
