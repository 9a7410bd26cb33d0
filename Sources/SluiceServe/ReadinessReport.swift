import Foundation
import Logging
import SluiceCore
import SluicePipeline
import SluiceState

/// `GET /ready`: each dependency, as an orchestrator's readiness probe reads it (200 when the store and the
/// embedder answer and the state is readable or not there yet, else 503).
struct ReadinessReport: Encodable {
    struct Dependency: Encodable {
        var ok: Bool
        var detail: String?
    }

    struct LastRun: Encodable {
        var runID: String
        var startedAt: Double
        var endedAt: Double?
        var exitCode: Int32?
        var outcome: String
        enum CodingKeys: String, CodingKey {
            case outcome
            case runID = "run_id"
            case startedAt = "started_at"
            case endedAt = "ended_at"
            case exitCode = "exit_code"
        }
    }

    /// The checkpoint: `ok`; `absent` (no run yet: a fresh index, still ready); `damaged` (`state-corrupt`:
    /// not ready, as `sluice run` refuses it) or `unreadable` (it cannot be opened or read otherwise: not ready).
    struct StateCondition: Encodable {
        var status: String
        /// The failure's code, or (to a caller with the token) what happened and how to recover.
        var detail: String?
    }

    var ready: Bool
    var store: Dependency
    var embedder: Dependency
    /// Whether an answer model is configured (`ask`); not a condition of readiness.
    var answerModelConfigured: Bool
    var documents: Int?
    var vectors: Int?
    var lastRun: LastRun?
    var state: StateCondition
    /// The local store's index, as `sluice status --json` says it (`store_index`: `index`, and `hnsw_*` or
    /// `ivf_*`): for `hnsw`, where the nodes live and whether searches use the graph or scan. Absent for
    /// another kind of store, or when the store does not answer.
    var storeIndex: [String: String]?
    /// How this server's reads fault in the local store's LMDB map, as `sluice status --json` says it
    /// (`store_map`: `fault_around` `off` or `on`, and with `on` its `reason`). Absent for another kind of store.
    var storeMap: [String: String]?

    enum CodingKeys: String, CodingKey {
        case ready, store, embedder, documents, vectors, state
        case answerModelConfigured = "answer_model_configured"
        case lastRun = "last_run"
        case storeIndex = "store_index"
        case storeMap = "store_map"
    }

    /// Asks each dependency, each within `timeout` (a dependency that hangs is reported down, not waited for).
    ///
    /// `/ready` is open (probes carry no token), so by default it names the store by its kind (`local`,
    /// `pgvector`) and a failure by its code: the store's path, a database's host, user and table, and the
    /// failure's message go to the log, and into the report only when `detailed` (a caller with the token).
    /// With `countsHidden` (access control on, a caller without the token) the index's counts and its last
    /// run are left out: they count documents the caller may not read (session 47's campaign).
    static func probe(
        checkpoint reader: CheckpointReader,
        searcher: Searcher,
        answerModelConfigured: Bool,
        timeout: Duration,
        detailed: Bool = false,
        countsHidden: Bool = false,
        logger: Logger? = nil
    ) async
        -> ReadinessReport
    {
        let setting = "serve.request_timeout_seconds"
        func down(_ what: String, _ error: any Error) -> Dependency {
            let sluice = error as? SluiceError
            let message = sluice?.message ?? "\(error)"
            logger?.warning("not ready: \(what): \(message)")
            return Dependency(ok: false, detail: detailed ? message : sluice?.code.rawValue ?? "internal")
        }
        var store = Dependency(ok: true)
        var vectors: Int?
        var storeIndex: [String: String]?
        var storeMap: [String: String]?
        do {
            let sink = searcher.sink
            let info = try await withDeadline(timeout, what: "the store", setting: setting) { try await sink.info() }
            vectors = info.count
            storeIndex = Pipeline.storeIndex(info.details)
            storeMap = Pipeline.storeMap(info.details)
            store.detail = detailed ? sink.name : String(sink.name.prefix { $0 != ":" })
        } catch {
            store = down("the store", error)
        }
        // The embedder was loaded at start; one that is remote must still answer.
        var embedder = Dependency(ok: true, detail: searcher.embedder.identity.description)
        do {
            let model = searcher.embedder
            try await withDeadline(timeout, what: "the embedder", setting: setting) { try await model.checkReachable() }
        } catch {
            embedder = down("the embedder", error)
        }
        // The state: its file, its document count and its last run record, each read for real (a damaged file
        // or run record is not "no state"); not every document record (`sluice verify` reads those).
        var documents: Int?
        var lastRun: LastRun?
        var state = StateCondition(status: "ok")
        do {
            if let checkpoint = try reader.openIfPresent() {
                documents = try checkpoint.documentCount()
                if let run = try checkpoint.recentRuns(limit: 1).first {
                    let outcome =
                        run.exitCode.map { RunProgressReport.outcome(of: RunExitCode(rawValue: $0)) }
                        ?? (run.endedAt == nil ? "running" : "unknown")
                    lastRun = LastRun(
                        runID: run.runID,
                        startedAt: run.startedAt,
                        endedAt: run.endedAt,
                        exitCode: run.exitCode,
                        outcome: outcome
                    )
                }
            } else {
                state.status = "absent"
            }
        } catch {
            let failure = (error as? SluiceError).map(CheckpointReader.apiError) ?? APIError(error)
            let damaged = failure.code == SluiceError.Code.stateCorrupt.rawValue
            logger?.warning("not ready: the state: \(failure.message)")
            state = StateCondition(
                status: damaged ? "damaged" : "unreadable",
                detail: detailed ? failure.message : failure.code
            )
        }
        return ReadinessReport(
            ready: store.ok && embedder.ok && (state.status == "ok" || state.status == "absent"),
            store: store,
            embedder: embedder,
            answerModelConfigured: answerModelConfigured,
            documents: countsHidden ? nil : documents,
            vectors: countsHidden ? nil : vectors,
            lastRun: countsHidden ? nil : lastRun,
            state: state,
            storeIndex: storeIndex,
            storeMap: storeMap
        )
    }
}
