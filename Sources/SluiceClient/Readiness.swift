/// `GET /health`.
public struct Health: Sendable, Hashable, Codable {
    public var status: String
}

/// `GET /ready`: each dependency, the index's size and the last run.
public struct Readiness: Sendable, Hashable, Codable {
    public struct Dependency: Sendable, Hashable, Codable {
        public var ok: Bool
        public var detail: String?
    }

    public struct LastRun: Sendable, Hashable, Codable {
        public var runID: String
        public var startedAt: Double
        public var endedAt: Double?
        public var exitCode: Int?
        public var outcome: String

        enum CodingKeys: String, CodingKey {
            case outcome
            case runID = "run_id"
            case startedAt = "started_at"
            case endedAt = "ended_at"
            case exitCode = "exit_code"
        }
    }

    public var ready: Bool
    public var store: Dependency
    public var embedder: Dependency
    public var answerModelConfigured: Bool
    public var documents: Int?
    public var vectors: Int?
    public var lastRun: LastRun?

    enum CodingKeys: String, CodingKey {
        case ready, store, embedder, documents, vectors
        case answerModelConfigured = "answer_model_configured"
        case lastRun = "last_run"
    }
}
