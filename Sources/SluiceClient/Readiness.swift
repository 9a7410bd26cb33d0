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

    /// The checkpoint (the state folder), as `GET /ready` finds it.
    public struct State: Sendable, Hashable, Codable {
        /// `ok`; `absent` (no run yet: a fresh index, still ready); `damaged` (its file is truncated or
        /// damaged: not ready, `sluice run` refuses it too) or `unreadable` (it cannot be opened or read
        /// otherwise: not ready).
        public var status: String
        /// For `damaged` and `unreadable`: the failure's code, or, to a caller with the token, what happened
        /// and how to recover.
        public var detail: String?
    }

    public var ready: Bool
    public var store: Dependency
    public var embedder: Dependency
    public var answerModelConfigured: Bool
    public var documents: Int?
    public var vectors: Int?
    public var lastRun: LastRun?
    /// Nil from a server that does not report it (before the state entry was added).
    public var state: State?
    /// The local store's index (`store_index`, as `sluice status --json` reports it): `index` (`hnsw`, `ivf`,
    /// `exact`); with `hnsw`, `hnsw_nodes` (`memory`, `file`), `hnsw_graph` (`built`, `building`, `pending`,
    /// `below_exact_below`: searches scan unless `built`), `hnsw_exact_below` and, for a built graph,
    /// `hnsw_graph_generation`, `hnsw_graph_behind` and `hnsw_ef_search`; with `ivf`, the `ivf_*` entries. Nil for another kind
    /// of store, when the store did not answer, and from a server that does not report it.
    public var storeIndex: [String: String]?
    /// How the server's reads fault in the local store's LMDB map (`store_map`): `fault_around` `off` (point reads
    /// fault one page at a time; scans keep fault-around) or `on` (the kernel's behaviour) and, with `on`, its
    /// `reason`. Nil for another kind of store, when the store did not answer, and from a server that does not
    /// report it.
    public var storeMap: [String: String]?

    enum CodingKeys: String, CodingKey {
        case ready, store, embedder, documents, vectors, state
        case answerModelConfigured = "answer_model_configured"
        case lastRun = "last_run"
        case storeIndex = "store_index"
        case storeMap = "store_map"
    }
}
