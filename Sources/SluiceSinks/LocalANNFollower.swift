import Dispatch

/// The thread that brings the local store's graph up to each committed write, so that the sink's writer
/// thread goes on to the next transaction meanwhile (graph inserts are off the write path's critical path).
///
/// Changes are applied one at a time, in the order they were handed over. At most one waits or runs: the
/// writer blocks when it hands over the next while the last is still being applied, so the follower holds
/// one batch's vectors at most and the graph is never more than one write behind.
final class LocalANNFollower: @unchecked Sendable {
    // Both are thread-safe; the class only owns them.
    private let queue = DispatchQueue(label: "sl-local-graph")
    private let slot = DispatchSemaphore(value: 1)

    /// Runs `body` on the follower's thread after everything handed over before it; blocks the caller while
    /// the previous change is still being applied.
    func hand(_ body: @escaping @Sendable () -> Void) {
        slot.wait()
        queue.async {
            body()
            self.slot.signal()
        }
    }

    /// Returns once every change handed over has been applied. Never call it on the follower's thread.
    func settle() { queue.sync {} }

    /// For tests: the follower applies nothing more until `gate` is signalled (the writer goes on until it
    /// hands over a second change).
    func hold(until gate: DispatchSemaphore) { queue.async { gate.wait() } }
}
