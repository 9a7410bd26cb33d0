import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The CPU time of a stage's work, on whichever threads ran it: the cooperative pool's for code that runs
/// there (chunking, hashing), a ``BlockingExecutor``'s for work handed to it (reading, extraction).
///
/// A stage sets ``current`` around each document's work; ``measure(_:)`` and ``BlockingExecutor/run(_:)``
/// add the calling thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`) to it. Unlike wall time, it leaves out the
/// time a document waits: for an executor thread, for another document's extraction, or for a core.
/// Work in other processes (the extract workers) is not in it.
package final class WorkCPU: Sendable {
    private let nanoseconds = Atomic<Int>(0)

    package init() {}

    /// The CPU time added so far.
    package var seconds: Double { Double(nanoseconds.load(ordering: .relaxed)) / 1e9 }

    /// The meter of the work the current task does for a stage; nil when no stage measures it.
    @TaskLocal package static var current: WorkCPU?

    /// Runs `body`, which must not suspend (it stays on one thread), adding its CPU time to ``current``.
    package static func measure<T>(_ body: () throws -> T) rethrows -> T {
        guard let meter = current else { return try body() }
        return try meter.measuring(body)
    }

    /// Runs `body` on the calling thread, adding its CPU time to this meter.
    package func measuring<T>(_ body: () throws -> T) rethrows -> T {
        let start = Self.threadNanoseconds()
        defer { nanoseconds.add(Self.threadNanoseconds() - start, ordering: .relaxed) }
        return try body()
    }

    /// The CPU time of the calling thread, in nanoseconds.
    package static func threadNanoseconds() -> Int {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return time.tv_sec * 1_000_000_000 + time.tv_nsec
    }
}
