import SluiceCore
import Synchronization

extension Pipeline {
    /// The ids of the store's vectors whose documents `shard` owns, read from the store's records (every
    /// record is read once: `verify` is maintenance, not a hot path). A shard's state knows only its own
    /// documents: the other shards' vectors are theirs, neither unknown to it nor its to delete.
    func storedIDs(ownedBy shard: Shard, in sink: any VectorSink) async throws -> Set<VectorID> {
        let owned = Mutex(Set<VectorID>())
        try await sink.exportAll { record in
            if shard.owns(record.documentKey) { owned.withLock { _ = $0.insert(record.id) } }
        }
        return owned.withLock { $0 }
    }
}
