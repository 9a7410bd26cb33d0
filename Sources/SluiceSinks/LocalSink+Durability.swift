import SluiceCore
import SluiceLMDB
import Synchronization

/// When the local store's writes reach the disk (docs/RELIABILITY.md, "Durable before claimed").
///
/// The store is opened with LMDB's `MDB_NOMETASYNC`: an upsert's commit syncs its data pages and writes the
/// meta page that makes them current without waiting for the disk, so the writer thread (which the
/// upsert callers wait for) pays one `fdatasync` a commit instead of an `fdatasync` and a synchronous
/// write. A `kill -9` loses nothing (the meta page is in the page cache); a power loss can undo the last
/// commits, never LMDB's integrity. The pipeline calls ``makeDurable()`` before the checkpoint marks
/// documents indexed, so what a power loss undoes is never claimed. Deletes and clears sync at once.
extension LocalSink {
    /// Syncs the store (`mdb_env_sync`, one `fdatasync` of `data.mdb`) if an upsert committed since the
    /// last sync; on a thread of its own, so that the writer goes on committing meanwhile.
    /// - Throws: ``SluiceError/Code/sinkFailed`` (or `disk-full`) when the sync fails.
    public func makeDurable() async throws {
        guard let target = syncLedger.unsynced() else { return }
        let environment = self.environment
        try await syncer.run { try environment.sync() }
        syncLedger.synced(through: target)
    }
}

/// Counts the local store's upsert commits and how many of them a sync has covered.
final class LocalSyncLedger: Sendable {
    private let state = Mutex((committed: 0, durable: 0))

    /// Called by the writer after each upsert's commit, before the upsert returns. Under `MDB_NOMETASYNC` a
    /// commit still syncs its own data pages (`fdatasync` of `data.mdb`) before it writes its meta page, and
    /// that sync flushes every page written to the file before it — the previous commit's meta page
    /// included: so every commit but the newest is durable, and ``makeDurable()`` syncs only when the
    /// newest commit is one it must cover (while the writer keeps committing, mostly it need not).
    func committed() {
        state.withLock { state in
            state.durable = max(state.durable, state.committed)
            state.committed += 1
        }
    }

    /// The number of commits a sync started now covers, or nil when every commit is covered already.
    func unsynced() -> Int? {
        state.withLock { $0.committed > $0.durable ? $0.committed : nil }
    }

    /// Records that a sync started after `target` commits has returned.
    func synced(through target: Int) {
        state.withLock { $0.durable = max($0.durable, target) }
    }

    /// Upsert commits no sync covers yet (for tests).
    var pending: Int { state.withLock { $0.committed - $0.durable } }
}
