import Foundation
import SluiceCore
import SluiceLMDB

/// Merging segments (``KeywordMergePolicy``): a merge is planned from a snapshot (the inputs' live postings
/// joined in memory, in a read transaction) and applied in a write transaction, which replaces the inputs in
/// the directory by the merged segment. The merge thread (``KeywordMerger``) does the two in separate
/// transactions, so the write transactions of upserts and deletes never merge; a rebuild does both in its
/// own transaction.
///
/// Between the plan and its application, writes may add segments after the inputs (numbers only rise) and
/// mark more records of the inputs dead (a replaced or deleted record): the merged segment keeps the
/// postings of those, and their dead marks stay, so readers go on skipping them. A merge whose inputs are no
/// longer in the directory (a store emptied meanwhile) is dropped.
extension KeywordIndex {
    /// A merge computed from a snapshot, to be applied in a write transaction.
    struct MergePlan: Sendable {
        /// The consecutive segments merged, as the snapshot listed them.
        var inputs: [KeywordSegment]
        /// The dead record numbers in the inputs' range whose postings the merged segment drops.
        var dead: Set<UInt64>
        /// The merged segment's entries, sorted by term.
        var merged: KeywordSegmentEntries
    }

    /// Joins the live postings of the consecutive segments `inputs` (reads only).
    func planMerge(_ inputs: [KeywordSegment], _ txn: LMDBTransaction) throws -> MergePlan {
        let postings = try environment.database(Self.postingsDatabase)
        let records = try environment.database(Self.recordsDatabase)
        let first = inputs[0].first
        let last = inputs[inputs.count - 1].last
        var dead = Set<UInt64>()
        if inputs.contains(where: { $0.dead > 0 }) {
            try txn.forEach(records, from: Self.deadKey(first)) { key, _ in
                guard key.count == 9, key[0] == UInt8(ascii: "d") else { return false }
                let number = Self.bigEndianInteger(key[1...])
                guard number <= last else { return false }
                dead.insert(number)
                return true
            }
        }
        // Each input's entries, in key (term) order, each input's in one piece (no arrays per entry).
        var lists: [KeywordSegmentEntries] = []
        for input in inputs {
            let prefix = input.prefix
            var list = KeywordSegmentEntries()
            try txn.forEach(postings, from: prefix) { key, block in
                guard key.count > prefix.count, key.starts(with: prefix) else { return false }
                KeywordSegmentBlocks.forEachEntry(in: block) { term, value in
                    list.append(term: term) { $0.append(contentsOf: value) }
                }
                return true
            }
            lists.append(list)
        }
        // Room for every input entry (dead postings only shrink it): the merged segment is allocated once, not
        // grown by doubling, which held the old and the new arrays at once and up to twice the bytes after.
        var merged = KeywordSegmentEntries()
        merged.reserve(
            count: lists.reduce(0) { $0 + $1.count },
            termBytes: lists.reduce(0) { $0 + $1.termBytes },
            valueBytes: lists.reduce(0) { $0 + $1.valueBytes }
        )
        KeywordSegmentEntries.withUnsafeEntries(of: lists[...]) { lists in
            Self.join(lists, dropping: dead, into: &merged)
        }
        return MergePlan(inputs: inputs, dead: dead, merged: merged)
    }

    /// Joins the entries of `lists` (consecutive segments, in order) into `merged`, term by term, leaving out
    /// the postings of `dead` records. A term's lists are joined in place (``KeywordPostings/appendJoined(_:_:to:)``),
    /// read without a reference counted or a list made per term: a merge of the latency corpus's segments spent
    /// about a fifth of its CPU retaining and releasing them (docs/BENCHMARKS.md).
    private static func join(
        _ lists: [KeywordSegmentEntries.UnsafeEntries],
        dropping dead: Set<UInt64>,
        into merged: inout KeywordSegmentEntries
    ) {
        var heads = [Int](repeating: 0, count: lists.count)
        var holding: [Int] = []  // the lists whose next term is the smallest, in order
        holding.reserveCapacity(lists.count)
        while true {
            holding.removeAll(keepingCapacity: true)
            var smallest = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
            for index in lists.indices where heads[index] < lists[index].count {
                let term = lists[index].term(heads[index])
                let order =
                    holding.isEmpty
                    ? -1 : KeywordSegmentEntries.compare(UnsafeRawBufferPointer(term), UnsafeRawBufferPointer(smallest))
                if order < 0 {
                    smallest = term
                    holding.removeAll(keepingCapacity: true)
                    holding.append(index)
                } else if order == 0 {
                    holding.append(index)
                }
            }
            guard !holding.isEmpty else { break }
            if dead.isEmpty {
                if holding.contains(where: { KeywordPostings.hasPostings(stored: lists[$0].value(heads[$0])) }) {
                    merged.append(term: smallest) { out in
                        KeywordPostings.appendJoined(
                            holding.count,
                            { lists[holding[$0]].value(heads[holding[$0]]) },
                            to: &out
                        )
                    }
                }
            } else {
                var combined = KeywordPostings()
                for index in holding {
                    KeywordPostings.forEachPosting(stored: Array(lists[index].value(heads[index]))) { number, encoded in
                        if !dead.contains(number) { combined.append(number: number, encoded: encoded) }
                    }
                }
                if !combined.isEmpty { merged.append(term: smallest) { combined.appendStored(to: &$0) } }
            }
            for index in holding { heads[index] += 1 }
        }
    }

    /// Replaces the plan's inputs with the merged segment (a level up when several are merged).
    /// - Returns: false, writing nothing, when the inputs are no longer in the directory as planned.
    func apply(_ plan: MergePlan, _ state: inout State, _ txn: LMDBTransaction) throws -> Bool {
        let inputs = plan.inputs
        guard let start = state.segments.firstIndex(where: { $0.id == inputs[0].id }),
            start + inputs.count <= state.segments.count
        else { return false }
        let range = start..<(start + inputs.count)
        let current = Array(state.segments[range])
        for (now, planned) in zip(current, inputs) {
            var unchanged = now
            unchanged.dead = planned.dead
            guard unchanged == planned, now.dead >= planned.dead else { return false }
        }
        let postings = try environment.database(Self.postingsDatabase)
        let records = try environment.database(Self.recordsDatabase)
        let first = inputs[0].first
        let last = inputs[inputs.count - 1].last
        // Records marked dead since the plan keep their postings in the merged segment, and their marks.
        let stillDead = max(0, current.reduce(0) { $0 + $1.dead } - plan.dead.count)
        for input in inputs {
            try txn.deleteRange(postings, from: input.prefix, before: Self.bigEndian(input.id + 1))
        }
        if plan.merged.isEmpty || stillDead == 0 {
            // Nothing of the range is left to skip.
            try txn.deleteRange(records, from: Self.deadKey(first), before: Self.deadKey(last + 1))
        } else {
            for number in plan.dead { _ = try txn.delete(records, Self.deadKey(number)) }
        }
        var replacement: [KeywordSegment] = []
        if !plan.merged.isEmpty {
            var output = KeywordSegment(
                id: state.nextSegment,
                level: inputs.count > 1 ? (inputs.map(\.level).max() ?? 0) + 1 : inputs[0].level,
                first: first,
                last: last,
                records: inputs.reduce(0) { $0 + $1.records } - plan.dead.count,
                dead: stillDead,
                bytes: 0
            )
            state.nextSegment += 1
            output.bytes = try write(plan.merged, segment: output.id, txn)
            replacement.append(output)
        }
        state.segments.replaceSubrange(range, with: replacement)
        return true
    }

    /// One merge the policy asks for, planned in a read transaction and applied in a write transaction of
    /// its own (on the merge thread).
    /// - Returns: whether a merge was applied (false: nothing to merge, or the directory changed under it).
    func mergeOnce() throws -> Bool {
        let plan: MergePlan? = try environment.read { txn in
            guard try isBuilt(txn) else { return nil }
            let state = try load(txn)
            guard let range = policy.next(state.segments.map(\.policyView)) else { return nil }
            return try planMerge(Array(state.segments[range]), txn)
        }
        guard let plan else { return false }
        return try environment.write { txn in
            guard try isBuilt(txn) else { return false }
            var state = try load(txn)
            guard try apply(plan, &state, txn) else { return false }
            try save(state, txn)
            CrashPoint.reach("local.keyword-merge-written")  // inside the transaction: nothing of it survives
            return true
        }
    }
}
