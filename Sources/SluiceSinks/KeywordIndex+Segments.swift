import Foundation
import SluiceLMDB

/// Writing segments: one per write transaction, collected by a `SegmentBuilder`
/// (`KeywordIndex+SegmentBuilder.swift`). Merges are in `KeywordIndex+Merging.swift`.
extension KeywordIndex {
    /// Writes the collected postings as a new level-0 segment, merges what the policy asks for (a rebuild
    /// runs in one transaction) and empties `segment`.
    func flush(_ segment: inout SegmentBuilder, _ state: inout State, _ txn: LMDBTransaction) throws {
        defer { segment = SegmentBuilder() }
        // Records without a term have no postings: no segment needs to cover their numbers.
        guard segment.records > 0, !segment.isEmpty else { return }
        let entries = segment.entries
        try append(
            entries,
            rebasedBy: 0,
            first: segment.first,
            last: segment.last,
            records: segment.records,
            &state,
            txn
        )
        try maintain(&state, txn)
    }

    /// Writes `entries` (sorted by term, numbers raised by `base` as they are written) as a new level-0
    /// segment covering `first`…`last`, at the end of the directory.
    func append(
        _ entries: KeywordSegmentEntries,
        rebasedBy base: UInt64,
        first: UInt64,
        last: UInt64,
        records: Int,
        _ state: inout State,
        _ txn: LMDBTransaction
    ) throws {
        var written = KeywordSegment(
            id: state.nextSegment,
            level: 0,
            first: first,
            last: last,
            records: records,
            dead: 0,
            bytes: 0
        )
        state.nextSegment += 1
        written.bytes = try write(entries, segment: written.id, rebasedBy: base, txn)
        state.segments.append(written)
    }

    /// Merges and rewrites segments until the policy asks for nothing more, in this transaction.
    func maintain(_ state: inout State, _ txn: LMDBTransaction) throws {
        while let range = policy.next(state.segments.map(\.policyView)) {
            let plan = try planMerge(Array(state.segments[range]), txn)
            _ = try apply(plan, &state, txn)
        }
    }

    /// Writes a segment's entries (sorted by term), each list's numbers raised by `base`, packed into blocks
    /// (``KeywordSegmentBlocks``); returns the bytes written. The buffers are used again for the next entry and
    /// block (LMDB copies them).
    func write(
        _ entries: KeywordSegmentEntries,
        segment: UInt64,
        rebasedBy base: UInt64 = 0,
        _ txn: LMDBTransaction
    ) throws
        -> Int
    {
        let postings = try environment.database(Self.postingsDatabase)
        let prefix = Self.bigEndian(segment)
        var bytes = 0
        var key = prefix
        var value: [UInt8] = []
        var packer = KeywordSegmentBlocks.Packer()
        // The segment's id is above every stored one: each block's key goes after the last (an append).
        let put = { (first: [UInt8], block: [UInt8]) throws in
            key.removeSubrange(prefix.count...)
            key.append(contentsOf: first)
            try txn.put(postings, key, block, append: true)
            bytes += key.count + block.count
        }
        try entries.forEachEntry { term, stored in
            value.removeAll(keepingCapacity: true)
            KeywordPostings.rebase(stored: stored, by: base, into: &value)
            try packer.add(term: term, value: value, write: put)
        }
        try packer.finish(write: put)
        return bytes
    }
}
