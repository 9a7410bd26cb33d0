/// Which segments of the local keyword index to merge next (pure: a directory in, a decision out).
///
/// Every write transaction adds one segment at level 0. When ``fanIn`` consecutive segments share a level
/// and hold at most ``maxMergedBytes`` together, they become one segment a level up (the logarithmic
/// method: a posting is rewritten about log_fanIn(transactions) times, and a search reads at most
/// fanIn − 1 segments per level). The leftmost such run goes first: merges run behind the writes (on the
/// store's merge thread), so more than fanIn new segments may wait, and merging the oldest first keeps the
/// levels falling from the oldest segment to the newest. Segments too large to merge further stay as they
/// are; a search then reads one more key per query term for each (about one per ``maxMergedBytes`` of
/// postings). A segment whose records are a quarter or more dead (replaced or deleted since) is rewritten
/// alone, dropping their postings, so dead postings stay a bounded share of what a search reads.
///
/// The bound on merged bytes bounds one merge's memory (its inputs and the merged segment, both in memory
/// while it is planned) and its transaction's dirty pages (LMDB holds them in memory until the commit), so
/// that peak memory does not grow without bound with the store. It is above what the 1× benchmark corpus's
/// merges reach (its postings are about a tenth of the 10× corpus's 46.8 MB), so a merge's plan is a few MB
/// more of the 10× corpus's heap peak (docs/BENCHMARKS.md, "What grows in the heap from 1× to 10×"). 2 MB,
/// tried, left most segments unmerged (eight level-0 segments, ~0.3 MB each there, hold more): 189 segments
/// at the 10× corpus against 30, and 23% more bytes of postings.
struct KeywordMergePolicy {
    var fanIn = 8
    var maxMergedBytes = 8 << 20
    /// Level-0 segments waiting beyond which the writer waits for the merges (``isBehind(_:)``).
    var maxWaiting = 64

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
        for start in 0...(segments.count - fanIn) {
            let window = segments[start..<(start + fanIn)]
            let level = segments[start].level
            if window.allSatisfy({ $0.level == level }) && window.reduce(0, { $0 + $1.bytes }) <= maxMergedBytes {
                return window.indices
            }
        }
        return nil
    }

    /// Whether the merges have fallen so far behind the writes that the writer should wait for them: more
    /// than ``maxWaiting`` level-0 segments (each costs a search one more key per query term).
    func isBehind(_ segments: [Segment]) -> Bool {
        segments.reduce(0) { $0 + ($1.level == 0 ? 1 : 0) } > maxWaiting
    }
}
