import Synchronization

/// What the local store knows of its ANN index in this process: the graph in memory and the store
/// generation it matches (LMDB's `ann` database counts every write transaction; the data is the truth).
///
/// Only the sink's writer thread and its follower change the graph (in a reader: bringing it up to date), the
/// builder hands over a graph it built from a snapshot (``adopt(_:)``), and a search that loads a saved graph
/// replaces it; searches take a snapshot and use it when the change log brings
/// its generation to the one their read transaction sees (`LocalSink+ANNReader.swift`).
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
        /// A search is loading a saved graph, or the graph is being brought up to date from the change log:
        /// one at a time; the other searches go on meanwhile.
        var busy = false
        /// Saved graphs (file names) that could not be loaded (damaged, another count): not tried again.
        /// A file saved later has another name, and is tried.
        var unloadable: Set<String> = []
        /// A rebuild failed (out of memory): not tried again by this process; searches scan.
        var rebuildFailed = false
        /// A search breadth fixed for this process (``LocalSink/setSearchBreadth(_:)``), else the setting's.
        var breadth: Int?
        /// The generation of the last change handed to the follower (``LocalANNFollower``) and not yet
        /// applied: the graph will be at it once the follower is done.
        var pending: UInt64?
        /// The graph could not follow a write (out of memory, or dropped): the writer settles the follower
        /// and rebuilds before its next write.
        var lost = false
        /// The most changed vectors a catch-up held at once, read and not yet inserted (its batch bound).
        var mostCatchUpVectorsHeld = 0
    }

    private let state = Mutex(State())

    var live: Live? { state.withLock { $0.live } }

    func set(_ live: Live?) { state.withLock { $0.live = live } }

    func markSaved() { state.withLock { $0.live?.dirty = false } }

    /// The generation the graph will be at once the follower has applied what it was handed (nil: no
    /// graph follows the store). The writer's next transaction is tracked when this is the store's.
    var expectedGeneration: UInt64? {
        state.withLock { $0.lost ? nil : ($0.pending ?? $0.live?.generation) }
    }

    /// The writer handed the follower the change of `generation`.
    func expect(_ generation: UInt64) { state.withLock { if !$0.lost { $0.pending = generation } } }

    /// The follower applied the change of `generation` (the graph in ``live`` is at it).
    func applied(_ generation: UInt64) { state.withLock { if $0.pending == generation { $0.pending = nil } } }

    /// The graph could not follow a write: it is dropped (searches scan, or load a saved graph) until the
    /// writer rebuilds it.
    func lose() {
        state.withLock {
            $0.live = nil
            $0.pending = nil
            $0.lost = true
        }
    }

    /// After the follower settled: what the graph is at is what ``live`` says.
    func resetFollowing() {
        state.withLock {
            $0.pending = nil
            $0.lost = false
        }
    }

    var breadth: Int? {
        get { state.withLock { $0.breadth } }
        set { state.withLock { $0.breadth = newValue } }
    }

    var rebuildFailed: Bool {
        get { state.withLock { $0.rebuildFailed } }
        set { state.withLock { $0.rebuildFailed = newValue } }
    }

    /// Whether the caller may load a saved graph or bring the graph up to date (no one else is); if so, it
    /// must call ``endBusy()``.
    func beginBusy() -> Bool {
        state.withLock {
            guard !$0.busy else { return false }
            $0.busy = true
            return true
        }
    }

    func endBusy() { state.withLock { $0.busy = false } }

    /// A catch-up (``LocalSink/caughtUp(_:threads:batch:)``) held at most `count` changed vectors at once.
    func caughtUp(holding count: Int) {
        state.withLock { $0.mostCatchUpVectorsHeld = max($0.mostCatchUpVectorsHeld, count) }
    }

    /// The most changed vectors any catch-up of this process held at once, read from the store and not yet
    /// inserted: the bound its batches keep (the builder's 256), whatever the number of changes.
    var mostCatchUpVectorsHeld: Int { state.withLock { $0.mostCatchUpVectorsHeld } }

    func isUnloadable(_ file: String) -> Bool { state.withLock { $0.unloadable.contains(file) } }

    func markUnloadable(_ file: String) { state.withLock { _ = $0.unloadable.insert(file) } }

    /// Takes `live` (a loaded graph, or the graph brought up to a later generation) unless the graph in
    /// memory is already as new: never goes back to an older graph. Returns whether it was taken.
    @discardableResult
    func adopt(_ live: Live) -> Bool {
        state.withLock {
            if let current = $0.live, current.generation >= live.generation { return false }
            $0.live = live
            return true
        }
    }
}
