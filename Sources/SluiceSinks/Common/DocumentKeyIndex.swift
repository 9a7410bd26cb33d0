import SluiceCore
import Synchronization

/// Which ids a store in local files holds for each document key, for stores keyed by id alone (the local
/// store, JSONL): built by one scan the first time a document's vectors are asked for
/// (``VectorSink/storedVectors(ofDocument:)``, a new state adopting the store), then kept up to date by
/// the store's own writes, so that it never needs a second scan.
///
/// The scan holds the lock while it reads: a write acknowledged after the scan's snapshot updates the index
/// once the scan is over (the update waits for the lock); one acknowledged before it is in the snapshot (its
/// update, finding no index yet, is dropped, or applied again: sets are idempotent).
final class DocumentKeyIndex: Sendable {
    private struct Index {
        var idsByKey: [String: Set<VectorID>] = [:]
        var keyByID: [VectorID: String] = [:]

        mutating func insert(_ id: VectorID, key: String) {
            if let old = keyByID[id], old != key { idsByKey[old]?.remove(id) }
            keyByID[id] = key
            idsByKey[key, default: []].insert(id)
        }

        mutating func remove(_ id: VectorID) {
            guard let key = keyByID.removeValue(forKey: id) else { return }
            idsByKey[key]?.remove(id)
            if idsByKey[key]?.isEmpty == true { idsByKey[key] = nil }
        }
    }

    private let index = Mutex<Index?>(nil)

    init() {}

    /// The ids held for `key`; the first call builds the index with `scan`, which calls its argument with
    /// each stored record's id and document key. Blocks while another caller scans: call it from a thread
    /// of the store's own, never from the cooperative pool.
    func ids(
        of key: String,
        scan: (_ add: (VectorID, String) -> Void) throws -> Void
    ) throws -> Set<VectorID> {
        try index.withLock { index in
            if index == nil {
                var built = Index()
                try scan { id, key in built.insert(id, key: key) }
                index = built
            }
            return index?.idsByKey[key] ?? []
        }
    }

    /// Records that the store now holds these records (after the write is acknowledged).
    func upserted(_ records: [VectorRecord]) {
        index.withLock { index in
            guard index != nil else { return }
            for record in records { index?.insert(record.id, key: record.documentKey) }
        }
    }

    /// Records that the store no longer holds these ids.
    func deleted(_ ids: [VectorID]) {
        index.withLock { index in
            guard index != nil else { return }
            for id in ids { index?.remove(id) }
        }
    }

    /// The store was emptied.
    func cleared() {
        index.withLock { index in if index != nil { index = Index() } }
    }
}
