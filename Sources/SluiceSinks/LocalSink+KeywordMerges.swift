import Foundation
import SluiceCore
import Synchronization

/// The keyword index's merges, run by ``KeywordMerger`` after the writes (`KeywordIndex+Merging.swift`).
extension LocalSink {
    /// Asks the merge thread for a pass after a committed write, and waits for the merges when they have
    /// fallen behind (`segments`, the directory the write left, holds too many unmerged segments).
    ///
    /// A merge is an optimization: one that fails (a full disk, an I/O error) leaves the segments as they
    /// were, which searches read all the same. Its failure is counted and kept for the run to log, and
    /// bounded (`KeywordMergeFailures.swift`); a full map fails the store's next write.
    func requestKeywordMerges(_ keywords: KeywordIndex, after segments: [KeywordSegment]? = nil) {
        let merger = keywordMerger
        merger.request {
            KeywordMerger.openGate.withLock { _ in
                merger.runPass { try keywords.mergeOnce() }
            }
        }
        if let segments, keywords.policy.isBehind(segments.map(\.policyView)) {
            keywordMerger.settle()
        }
    }

    /// Waits until the merges requested so far have run (never inside a write transaction).
    func settleKeywordMerges() {
        keywordMerger.settle()
    }

    /// The keyword merges that failed since the store was opened.
    public var upkeepFailures: SinkUpkeepFailures { keywordMerger.failures.withLock { $0.report } }

    /// Throws the error of a merge that met a full map, once: the store's next write reports it, as a
    /// write that met it would have.
    func throwFailedKeywordMerge() throws {
        if let fatal = keywordMerger.failures.withLock({ $0.takeFatal() }) { throw fatal }
    }
}
