import Logging
import SluiceCore
import SluiceState

/// When a run adopts the store's vectors (``StoreAdoption``; docs/OPERATIONS.md, "A lost state,
/// re-sharding"): automatically, when the state has no document yet and the store holds vectors (a lost
/// state, a new shard of a re-sharding, a new machine), until a run of that state ends with every
/// document of the source committed. The state records that it is adopting (`adopt` in its metadata), so
/// that a run stopped half-way (a signal, kill -9, a failed document) adopts again when it resumes.
extension Pipeline {
    static let adoptionKey = "adopt"

    /// Whether this run adopts; records it in the state when it starts.
    func startAdoption(checkpoint: CheckpointStore, stateExecutor: BlockingExecutor) async throws -> Bool {
        if options.reembed {
            // The store was emptied: nothing to adopt.
            try await stateExecutor.run { try checkpoint.setMetadata(Self.adoptionKey, nil) }
            return false
        }
        // State reads are LMDB calls: on the state's executor, off the cooperative pool.
        let (pending, documents) = try await stateExecutor.run {
            (try checkpoint.metadata(Self.adoptionKey) != nil, try checkpoint.documentCount())
        }
        if pending { return true }
        guard documents == 0, try await components.sink.count() > 0 else { return false }
        try await stateExecutor.run { try checkpoint.setMetadata(Self.adoptionKey, "pending") }
        logger.notice(
            "the state is new and \(components.sink.name) holds vectors: documents take the vectors the store holds for their unchanged chunks instead of embedding them again"
        )
        return true
    }

    /// Ends adoption once a run committed every document of the source: later runs are ordinary ones.
    func finishAdoption(
        _ adopting: Bool,
        stats: RunStats,
        checkpoint: CheckpointStore,
        stateExecutor: BlockingExecutor
    ) async throws {
        guard adopting, !options.retryFailed, !stats.interrupted, stats.documentsFailed == 0,
            stats.documentsNotReached == 0
        else { return }
        try await stateExecutor.run { try checkpoint.setMetadata(Self.adoptionKey, nil) }
    }
}
