import Foundation
import Synchronization

/// The keyword index's merges, run by ``KeywordMerger`` after the writes (`KeywordIndex+Merging.swift`).
extension LocalSink {
    /// Asks the merge thread for a pass after a committed write, and waits for the merges when they have
    /// fallen behind (`segments`, the directory the write left, holds too many unmerged segments).
    ///
    /// A merge is an optimization: one that fails (a full disk) leaves the segments as they were, which
    /// searches read all the same, and the next write meets the same error and reports it.
    func requestKeywordMerges(_ keywords: KeywordIndex, after segments: [KeywordSegment]? = nil) {
        keywordMerger.request {
            KeywordMerger.openGate.withLock { _ in
                while (try? keywords.mergeOnce()) == true {}
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
}
