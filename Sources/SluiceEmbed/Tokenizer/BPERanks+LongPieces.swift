/// The merge of long pieces: tiktoken's `byte_pair_merge` scans every adjacent pair for the lowest rank
/// before each merge, so a piece of `n` bytes costs about `n²/2` steps; 100 KB of letters without a space
/// (a base64 blob, a hash dump) took minutes. From ``longPieceBytes`` bytes on, the tokenizer merges through
/// a heap of candidate pairs over a linked list of parts instead: `n log n`, the same merges in the same
/// order (the lowest rank first, the leftmost of equal ranks), so the same tokens. Shorter pieces (nearly
/// all) keep the scan, which is faster for them.
extension BPERanks {
    /// The length, in bytes, from which a piece is merged by ``mergeLongPiece(_:_:readable:_:)``.
    static let longPieceBytes = 256

    /// Merges the `n` bytes at `piece` (`readable` bytes may be read from it) as tiktoken does, calling
    /// `body` with the rank of each final token, in order.
    func mergeLongPiece(_ piece: UnsafePointer<UInt8>, _ n: Int, readable: Int, _ body: (UInt32) -> Void) {
        let none = Self.none
        // A part is named by the offset of its first byte, which merging never changes: merging part `i` with
        // the part after it removes that part. `next[i]` is the part after `i` (`n`: none), `previous[i]` the
        // one before it, `rank[i]` the rank of part `i` joined with the part after it.
        var next = [Int](1...n + 1)
        var previous = [Int](-1..<n)
        var rank = [UInt32](repeating: none, count: n)
        var alive = [Bool](repeating: true, count: n)
        // The candidates: rank << 32 | offset, so the smallest is the lowest rank, then the leftmost. An
        // entry is stale once its part is gone or its rank changed (a pair's rank is the rank of its bytes,
        // and a part's pair only ever grows, so an equal rank means the same pair).
        var heap = CandidateHeap()
        heap.reserve(n)
        for i in 0..<(n - 1) {
            rank[i] = self.rank(piece + i, 2, readable: 2)
            if rank[i] != none { heap.append(UInt64(rank[i]) << 32 | UInt64(i)) }
        }
        heap.heapify()

        // The rank of part `i` joined with the part after it.
        func pairRank(_ i: Int) -> UInt32 {
            let following = next[i]
            guard following < n else { return none }
            let end = next[following]
            return self.rank(piece + i, min(end, n) - i, readable: readable - i)
        }

        while let top = heap.popMinimum() {
            let i = Int(top & 0xFFFF_FFFF)
            guard alive[i], rank[i] == UInt32(top >> 32) else { continue }
            let removed = next[i]
            alive[removed] = false
            next[i] = next[removed]
            if next[i] < n { previous[next[i]] = i }
            rank[i] = pairRank(i)
            if rank[i] != none { heap.push(UInt64(rank[i]) << 32 | UInt64(i)) }
            let before = previous[i]
            if before >= 0 {
                rank[before] = pairRank(before)
                if rank[before] != none { heap.push(UInt64(rank[before]) << 32 | UInt64(before)) }
            }
        }
        var i = 0
        while i < n {
            let end = min(next[i], n)
            body(self.rank(piece + i, end - i, readable: readable - i))
            i = end
        }
    }
}

/// A binary min-heap of the merge candidates.
private struct CandidateHeap {
    private var items: [UInt64] = []

    mutating func reserve(_ count: Int) { items.reserveCapacity(count) }

    /// Adds without keeping the order; ``heapify()`` restores it.
    mutating func append(_ item: UInt64) { items.append(item) }

    mutating func heapify() {
        var i = items.count / 2
        while i > 0 {
            i -= 1
            siftDown(i)
        }
    }

    mutating func push(_ item: UInt64) {
        items.append(item)
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard items[child] < items[parent] else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    mutating func popMinimum() -> UInt64? {
        guard let last = items.popLast() else { return nil }
        guard !items.isEmpty else { return last }
        let minimum = items[0]
        items[0] = last
        siftDown(0)
        return minimum
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            var smallest = parent
            let left = 2 * parent + 1
            if left < items.count && items[left] < items[smallest] { smallest = left }
            if left + 1 < items.count && items[left + 1] < items[smallest] { smallest = left + 1 }
            if smallest == parent { return }
            items.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
