import SluiceCore

/// One write to the checkpoint that may share a transaction with others (``CheckpointStore/write(_:)``):
/// the run's writes from the embed, upsert and commit stages wait for the state's thread together and are
/// committed in one transaction, one sync for all of them (`CheckpointCommits.swift` in SluicePipeline).
package enum CheckpointWrite: Sendable {
    /// Documents' outcomes written (a claim: ``DocumentRecord/Status/indexed``) and records deleted.
    case commit(put: [DocumentRecord], delete: [String])
    /// The ids an attempt is about to upsert, recorded before the sink is written.
    case markPending([(key: String, ids: [VectorID])])
    /// Vectors kept in the embedding cache.
    case cacheEmbeddings([(ContentHash, [Float])], embedder: EmbedderIdentity)

    /// Its share of a transaction's budget: the records or entries it writes.
    package var weight: Int {
        switch self {
        case .commit(let put, let delete): put.count + delete.count
        case .markPending(let pending): pending.count
        case .cacheEmbeddings(let vectors, _): vectors.count
        }
    }
}
