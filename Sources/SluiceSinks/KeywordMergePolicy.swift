/// Which segments of the local keyword index to merge next (pure: a directory in, a decision out).
///
/// Every write transaction adds one segment at level 0. When the newest ``fanIn`` segments share a level
/// and hold at most ``maxMergedBytes`` together, they become one segment a level up (the logarithmic
/// method: a posting is rewritten about log_fanIn(transactions) times, and a search reads at most
/// fanIn − 1 segments per level). Segments too large to merge further stay as they are; a search then
/// reads one more key per query term for each (about one per ``maxMergedBytes`` of postings). A segment
/// whose records are a quarter or more dead (replaced or deleted since) is rewritten alone, dropping
/// their postings, so dead postings stay a bounded share of what a search reads.
///
/// The bound on merged bytes bounds one transaction's dirty pages (LMDB holds them in memory until the
/// commit), so that peak memory does not grow with the store.
struct KeywordMergePolicy {
    var fanIn = 8
    var maxMergedBytes = 8 << 20

    /// What the policy needs to know of a segment.
    struct Segment: Equatable {
        var level: Int
        var records: Int
        var dead: Int
        var bytes: Int
    }

    /// The segments (a range of the directory, in record-number order) to merge or rewrite next; nil: none.
    func next(_ segments: [Segment]) -> Range<Int>? {
        if let worn = segments.firstIndex(where: { $0.dead > 0 && $0.dead * 4 >= $0.records }) {
            return worn..<(worn + 1)
        }
        guard segments.count >= fanIn else { return nil }
        let tail = segments[(segments.count - fanIn)...]
        guard let level = tail.first?.level, tail.allSatisfy({ $0.level == level }),
            tail.reduce(0, { $0 + $1.bytes }) <= maxMergedBytes
        else { return nil }
        return tail.indices
    }
}
