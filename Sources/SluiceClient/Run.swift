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
    /// `success`, `documents-failed`, `interrupted`, `provider-refused`, or an error's code.
    public var outcome: String?
    /// The exit code `sluice run` would have exited with.
    public var exitCode: Int?
    /// The run's statistics, with the phase table under `phases` (the shape of `sluice run --stats-json`).
    public var stats: JSONValue?

    public var isFinished: Bool { state == "finished" }

    enum CodingKeys: String, CodingKey {
        case id, state, outcome, stats
        case startedAt = "started_at"
        case endedAt = "ended_at"
        case documentsDone = "documents_done"
        case documentsTotal = "documents_total"
        case elapsedSeconds = "elapsed_s"
        case exitCode = "exit_code"
    }
}
