import SluiceCore
import SluiceLMDB

/// What the local store does when a keyword merge pass fails (`KeywordMerger.swift`): a pure value, so
/// that the decisions are tested without threads or files.
///
/// A merge is an optimization: one that fails leaves the segments as they were, which searches read all the
/// same. So a failure fails no document; it is counted (``report``), and the first reason of each kind is
/// kept for the run to log. The pass stops at its failure, and the next write's pass tries again — up to
/// ``maxConsecutive`` failed passes in a row, after which merges stop until the store is opened again (a
/// merge that always fails would otherwise fail after every write). A full map is fatal: nothing more
/// can be written, so merges stop at once and the store's next write or `finish` throws the merge's error,
/// as a write that met it would have.
struct KeywordMergeFailures {
    /// Failed passes in a row after which merges stop.
    static let maxConsecutive = 3

    /// What the merge thread does after a failed pass.
    enum Action: Equatable {
        /// Leave the segments; the next write's pass tries again.
        case retryLater
        /// Stop merging until the store is opened again.
        case stop
        /// Stop merging, and fail the store's next write with ``fatal``.
        case fail
    }

    private(set) var report = SinkUpkeepFailures()
    private(set) var consecutive = 0
    /// The error the next write throws (a full map), once taken by ``takeFatal()``.
    private(set) var fatal: SluiceError?

    /// Whether a pass may merge.
    var mayMerge: Bool { !report.stopped }

    /// The bounded label of a failure.
    static func kind(of error: any Error) -> String {
        if LMDBMapFull.isCause(of: error) { return "map-full" }
        if (error as? SluiceError)?.code == .diskFull { return "disk-full" }
        return "failed"
    }

    /// Records a failed pass.
    mutating func failed(_ error: any Error) -> Action {
        report.count += 1
        consecutive += 1
        let kind = Self.kind(of: error)
        let reason = (error as? SluiceError)?.message ?? "\(error)"
        if report.reasons[kind] == nil { report.reasons[kind] = reason }
        if kind == "map-full" {
            report.stopped = true
            fatal = SluiceError(.sinkFailed, "a keyword merge failed: \(reason)", cause: error)
            return .fail
        }
        if consecutive >= Self.maxConsecutive {
            report.stopped = true
            return .stop
        }
        return .retryLater
    }

    /// Records a pass that merged what it had to.
    mutating func succeeded() { consecutive = 0 }

    /// The fatal error, once: the write that throws it reports it.
    mutating func takeFatal() -> SluiceError? {
        defer { fatal = nil }
        return fatal
    }
}
