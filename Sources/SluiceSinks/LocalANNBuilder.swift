import Dispatch
import Synchronization

/// The thread that builds the local store's graph from a read snapshot of LMDB when the store has none
/// (it grew past `sink.hnsw.exact_below`, the saved graph is lost or stale past the change log, or the graph
/// could not follow a write), so that the sink's writer thread goes on writing meanwhile
/// (`LocalSink+ANNBuild.swift`). One build at a time.
///
/// The build checks ``isStopped`` between batches: `finish()` stops a build it leaves to the next writer,
/// and waits with ``settle()`` until the build has closed its read transaction. While the load runs the build
/// inserts on one thread fewer than the cores (the pipeline keeps one); a caller that waits for it
/// (`finish()`, an explicit rebuild) first calls ``hurry()``, and from its next batch the build uses every
/// core: nothing else runs then.
final class LocalANNBuilder: @unchecked Sendable {
    private struct State {
        var running = false
        var stopped = false
        /// A write of this process started the build (not `prepare`): see `LocalSink.saveIndex()`.
        var startedByWrite = false
        /// Someone waits for the build (``hurry()``): it inserts on every core.
        var hurried = false
        /// The most insert threads the build under way (or the last) gave a batch before and after
        /// ``hurry()`` (for tests).
        var mostThreads = (unhurried: 0, hurried: 0)
        /// For tests: the build signals `reached` after building from its snapshot, then waits for `gate`
        /// (or for ``stop()``) before the catch-up.
        var beforeCatchUp: (reached: DispatchSemaphore, gate: DispatchSemaphore)?
    }

    // The queue is thread-safe; the state is behind the lock.
    private let queue = DispatchQueue(label: "sl-local-graph-build")
    private let state = Mutex(State())

    /// Starts `body` on the builder's thread unless a build is under way; returns whether it started.
    @discardableResult
    func start(byWrite: Bool, _ body: @escaping @Sendable () -> Void) -> Bool {
        let started = state.withLock { state -> Bool in
            guard !state.running else { return false }
            state = State(
                running: true,
                stopped: false,
                startedByWrite: byWrite,
                hurried: false,
                mostThreads: (0, 0),
                beforeCatchUp: state.beforeCatchUp
            )
            return true
        }
        guard started else { return false }
        queue.async {
            body()
            self.state.withLock { $0.running = false }
        }
        return true
    }

    /// Whether a build is under way (started and not yet ended).
    var isRunning: Bool { state.withLock { $0.running } }

    /// Whether a write of this process started the build under way.
    var startedByWrite: Bool { state.withLock { $0.running && $0.startedByWrite } }

    /// Whether the build under way was asked to stop (it then drops what it built).
    var isStopped: Bool { state.withLock { $0.stopped } }

    /// The insert threads the build under way gives its next batch, out of `cores`: one fewer while the
    /// load runs beside it, all of them once someone waits for it (``hurry()``). Called by the build.
    func threads(of cores: Int) -> Int {
        state.withLock { state in
            let threads = state.hurried ? max(1, cores) : max(1, cores - 1)
            if state.hurried {
                state.mostThreads.hurried = max(state.mostThreads.hurried, threads)
            } else {
                state.mostThreads.unhurried = max(state.mostThreads.unhurried, threads)
            }
            return threads
        }
    }

    /// For tests: the most insert threads the build under way (or the last) gave a batch before and after
    /// ``hurry()`` (0: no batch).
    var mostThreads: (unhurried: Int, hurried: Int) { state.withLock { $0.mostThreads } }

    /// Says that a caller now waits for the build under way (`finish()`, an explicit rebuild, before they
    /// settle it): its next batches, and its catch-up, insert on every core. A build paused by a test goes on.
    func hurry() {
        let paused = state.withLock { state -> DispatchSemaphore? in
            guard state.running else { return nil }
            state.hurried = true
            return state.beforeCatchUp?.gate
        }
        paused?.signal()
    }

    /// Asks the build under way to stop at its next batch (a build paused by a test goes on, and stops).
    func stop() {
        let paused = state.withLock { state -> DispatchSemaphore? in
            state.stopped = true
            return state.running ? state.beforeCatchUp?.gate : nil
        }
        paused?.signal()
    }

    /// Returns once the build under way (if any) has ended. Never call it on the builder's thread.
    func settle() { queue.sync {} }

    /// For tests: the next build starts only once `gate` is signalled.
    func hold(until gate: DispatchSemaphore) { queue.async { gate.wait() } }

    /// For tests: builds signal `reached` once built from their snapshot, then wait for `gate` (or for
    /// ``stop()`` or ``hurry()``) before catching up.
    func pauseBeforeCatchUp(reached: DispatchSemaphore, gate: DispatchSemaphore) {
        state.withLock { $0.beforeCatchUp = (reached, gate) }
    }

    /// Called by the build between its snapshot and its catch-up (pauses when a test asked it to).
    func reachCatchUp() {
        guard let pause = state.withLock({ $0.beforeCatchUp }) else { return }
        pause.reached.signal()
        if !state.withLock({ $0.stopped || $0.hurried }) { pause.gate.wait() }
    }
}
