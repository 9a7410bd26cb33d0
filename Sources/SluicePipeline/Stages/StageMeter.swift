import SluiceCore
import Synchronization

/// A stage's live statistics, updated by its workers (one short lock per document, not per chunk).
package final class StageMeter: Sendable {
    private let stats: Mutex<PhaseStats>

    package init(name: String, workers: Int) {
        stats = Mutex(PhaseStats(name: name, workers: workers))
    }

    package var snapshot: PhaseStats { stats.withLock { $0 } }

    package func starved(_ duration: Duration) { stats.withLock { $0.starvedSeconds += duration.seconds } }
    package func blocked(_ duration: Duration) { stats.withLock { $0.blockedSeconds += duration.seconds } }
    package func received(_ count: Int = 1) { stats.withLock { $0.itemsIn += count } }

    /// One request a remote source made (its `fetch` row): counted in and out, its time to the end of its
    /// answer's body as busy time and latency, and the bytes of the document it downloaded (0 for a listing,
    /// a sitemap, robots.txt or a 304).
    package func answered(after duration: Duration, bytes: Int = 0) {
        received()
        worked(duration, bytes: bytes)
    }

    /// One unit of work done: its busy time (also its latency), its CPU time if measured, bytes and items
    /// produced.
    package func worked(_ duration: Duration, cpu: Double? = nil, bytes: Int = 0, itemsOut: Int = 1) {
        stats.withLock {
            $0.busySeconds += duration.seconds
            if let cpu { $0.cpuSeconds = ($0.cpuSeconds ?? 0) + cpu }
            $0.latency.record(duration.seconds)
            $0.bytes += bytes
            $0.itemsOut += itemsOut
        }
    }
}
