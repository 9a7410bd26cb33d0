import SluiceCore
import Synchronization

/// Run-wide counters shared by the stages (documents by outcome, tokens, cache hits, in-flight gauge).
package final class RunTally: Sendable {
    private let stats = Mutex(RunStats())
    private let flight = Mutex((admitted: 0, settled: 0, maximum: 0))

    package init() {}

    package func update(_ body: (inout RunStats) -> Void) { stats.withLock { body(&$0) } }
    package var snapshot: RunStats { stats.withLock { $0 } }

    /// A document entered the pipeline.
    package func admitted() {
        flight.withLock {
            $0.admitted += 1
            $0.maximum = max($0.maximum, $0.admitted - $0.settled)
        }
    }

    /// Documents reached the checkpoint.
    package func settled(_ count: Int) { flight.withLock { $0.settled += count } }

    /// Documents between admission and checkpoint now, and the most there ever were.
    package var inFlight: (now: Int, maximum: Int) {
        flight.withLock { ($0.admitted - $0.settled, $0.maximum) }
    }
}
