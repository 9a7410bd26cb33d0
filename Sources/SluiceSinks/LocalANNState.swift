import Synchronization

/// What the local store knows of its ANN index in this process: the graph in memory and the store
/// generation it matches (LMDB's `ann` database counts every write transaction; the data is the truth).
///
/// Only the sink's writer thread replaces or changes the graph; searches take a snapshot and use it only
/// if its generation is the one their read transaction sees.
final class LocalANNState: Sendable {
    struct Live: Sendable {
        /// nil while the store holds no vector (a graph needs a dimension).
        var index: LocalANNIndex?
        var generation: UInt64
        /// Changed since it was last saved.
        var dirty: Bool
    }

    private struct State {
        var live: Live?
        /// A search is loading the saved index: the others scan meanwhile.
        var loading = false
        /// The generation whose saved index could not be loaded (damaged, another count): not tried again.
        var unloadable: UInt64?
        /// A rebuild failed (out of memory): not tried again by this process; searches scan.
        var rebuildFailed = false
    }

    private let state = Mutex(State())

    var live: Live? { state.withLock { $0.live } }

    func set(_ live: Live?) {
        state.withLock {
            $0.live = live
            $0.unloadable = nil
        }
    }

    func markDirty(generation: UInt64) {
        state.withLock {
            $0.live?.generation = generation
            $0.live?.dirty = true
        }
    }

    func markSaved() { state.withLock { $0.live?.dirty = false } }

    var rebuildFailed: Bool {
        get { state.withLock { $0.rebuildFailed } }
        set { state.withLock { $0.rebuildFailed = newValue } }
    }

    /// Whether the caller should try to load the saved index of `generation` (no one else is, and it
    /// was not found unusable before); if so, it must call ``finishLoading(_:generation:)``.
    func beginLoading(generation: UInt64) -> Bool {
        state.withLock {
            guard !$0.loading, $0.unloadable != generation, $0.live?.generation != generation else { return false }
            $0.loading = true
            return true
        }
    }

    func finishLoading(_ live: Live?, generation: UInt64) {
        state.withLock {
            $0.loading = false
            if let live {
                // The writer may have moved on meanwhile: never go back to an older graph.
                if ($0.live?.generation ?? 0) < live.generation || $0.live == nil { $0.live = live }
            } else {
                $0.unloadable = generation
            }
        }
    }
}
