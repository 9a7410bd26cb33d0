import Logging
import SluiceCore
import SluiceState

/// Clearing the whole sink and forgetting the checkpoint's documents (`sluice sink drop`, `run --reembed`),
/// in the order that survives a crash at any point (docs/DESIGN.md §4):
/// 1. the checkpoint forgets its documents and notes the pending clearing, in one transaction;
/// 2. the sink is cleared;
/// 3. the note is removed.
///
/// A crash after 1 leaves a state that claims nothing, and the note: the next `run` or `sink drop`
/// clears the sink before anything else (``completePending(sink:checkpoint:stateExecutor:logger:)``),
/// so the store never keeps vectors that no record tracks. The other order could leave "N indexed"
/// over an empty store, and every later run would skip everything.
package enum SinkReset: String, Sendable {
    /// Remove the collection, table or files themselves (`sluice sink drop`).
    case drop
    /// Delete every vector and keep the collection (`run --reembed`).
    case removeAll = "remove-all"

    /// Steps 1 to 3. `crashPoint` names the moment between 1 and 2 for the crash tests (``CrashPoint``).
    package func perform(
        sink: any VectorSink,
        checkpoint: CheckpointStore,
        stateExecutor: BlockingExecutor,
        crashPoint: String
    ) async throws {
        let kind = rawValue
        try await stateExecutor.run { try checkpoint.beginSinkReset(kind) }
        CrashPoint.reach(crashPoint)
        try await clear(sink)
        try await stateExecutor.run { try checkpoint.finishSinkReset() }
    }

    /// Completes a clearing that a crash interrupted, if the checkpoint notes one.
    /// - Returns: whether there was one.
    @discardableResult
    package static func completePending(
        sink: any VectorSink,
        checkpoint: CheckpointStore,
        stateExecutor: BlockingExecutor,
        logger: Logger
    ) async throws -> Bool {
        guard let kind = try checkpoint.pendingSinkReset() else { return false }
        // An unknown kind (a newer version's) still means: the documents are forgotten, clear the store.
        let reset = SinkReset(rawValue: kind) ?? .removeAll
        logger.warning(
            "a clearing of the sink was interrupted (the checkpoint forgot its documents, the store may still hold vectors): completing it",
            metadata: ["sluice-sink": "\(sink.name)", "sluice-reset": "\(kind)"]
        )
        try await reset.clear(sink)
        try await stateExecutor.run { try checkpoint.finishSinkReset() }
        return true
    }

    private func clear(_ sink: any VectorSink) async throws {
        switch self {
        case .drop: try await sink.drop()
        case .removeAll: try await sink.removeAll()
        }
    }
}
