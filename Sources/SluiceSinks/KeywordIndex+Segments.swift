import Foundation
import SluiceLMDB

/// Writing segments: one per write transaction, and merges of them (``KeywordMergePolicy``), all inside
/// the caller's write transaction.
extension KeywordIndex {
    /// The postings of the records a transaction writes, collected in memory and written as one segment.
    struct SegmentBuilder {
        var postings: [String: KeywordPostings] = [:]
        var records = 0
        var first: UInt64 = 0
        var last: UInt64 = 0

        mutating func add(number: UInt64, _ counts: Counts) {
            if records == 0 { first = number }
            records += 1
            last = number
            for (term, frequency) in counts.terms {
                postings[term, default: KeywordPostings()].append(
                    number: number,
                    frequency: frequency,
                    length: counts.length
                )
            }
        }
    }

    /// Writes the collected postings as a new level-0 segment and empties `segment`.
    func flush(_ segment: inout SegmentBuilder, _ state: inout State, _ txn: LMDBTransaction) throws {
        defer { segment = SegmentBuilder() }
        // Records without a term have no postings: no segment needs to cover their numbers.
        guard segment.records > 0, !segment.postings.isEmpty else { return }
        let entries = segment.postings.map { (term: Array($0.key.utf8), value: $0.value.stored) }
            .sorted { $0.term.lexicographicallyPrecedes($1.term) }
        var written = KeywordSegment(
            id: state.nextSegment,
            level: 0,
            first: segment.first,
            last: segment.last,
            records: segment.records,
            dead: 0,
            bytes: 0
        )
        state.nextSegment += 1
        written.bytes = try write(entries, segment: written.id, txn)
        state.segments.append(written)
        try maintain(&state, txn)
    }

    /// Merges and rewrites segments until the policy asks for nothing more.
    func maintain(_ state: inout State, _ txn: LMDBTransaction) throws {
        while let range = policy.next(state.segments.map(\.policyView)) {
            try merge(range, &state, txn)
        }
    }

    /// Replaces the consecutive segments `range` with one holding their live postings (a single segment:
    /// rewritten without its dead postings), a level up when several are merged.
    private func merge(_ range: Range<Int>, _ state: inout State, _ txn: LMDBTransaction) throws {
        let postings = try environment.database(Self.postingsDatabase)
        let records = try environment.database(Self.recordsDatabase)
        let inputs = Array(state.segments[range])
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
        // Each input's entries, in key (term) order.
        var lists: [[(term: [UInt8], value: [UInt8])]] = []
        for input in inputs {
            let prefix = input.prefix
            var list: [(term: [UInt8], value: [UInt8])] = []
            try txn.forEach(postings, from: prefix) { key, value in
                guard key.count > prefix.count, key.starts(with: prefix) else { return false }
                list.append((Array(key[prefix.count...]), Array(value)))
                return true
            }
            lists.append(list)
        }
        var merged: [(term: [UInt8], value: [UInt8])] = []
        var heads = [Int](repeating: 0, count: lists.count)
        while true {
            var smallest: [UInt8]?
            for (index, list) in lists.enumerated() where heads[index] < list.count {
                let term = list[heads[index]].term
                if smallest.map({ term.lexicographicallyPrecedes($0) }) ?? true { smallest = term }
            }
            guard let term = smallest else { break }
            var combined = KeywordPostings()
            for (index, list) in lists.enumerated() where heads[index] < list.count && list[heads[index]].term == term {
                let value = list[heads[index]].value
                heads[index] += 1
                if dead.isEmpty {
                    combined.append(stored: value)
                } else {
                    KeywordPostings.forEach(stored: value) { number, frequency, length in
                        if !dead.contains(number) {
                            combined.append(number: number, frequency: frequency, length: length)
                        }
                    }
                }
            }
            if !combined.isEmpty { merged.append((term, combined.stored)) }
        }
        lists = []
        for input in inputs {
            try txn.deleteRange(postings, from: input.prefix, before: Self.bigEndian(input.id + 1))
        }
        if !dead.isEmpty {
            try txn.deleteRange(records, from: Self.deadKey(first), before: Self.deadKey(last + 1))
        }
        var replacement: [KeywordSegment] = []
        if !merged.isEmpty {
            var output = KeywordSegment(
                id: state.nextSegment,
                level: inputs.count > 1 ? (inputs.map(\.level).max() ?? 0) + 1 : inputs[0].level,
                first: first,
                last: last,
                records: inputs.reduce(0) { $0 + $1.records - $1.dead },
                dead: 0,
                bytes: 0
            )
            state.nextSegment += 1
            output.bytes = try write(merged, segment: output.id, txn)
            replacement.append(output)
        }
        state.segments.replaceSubrange(range, with: replacement)
    }

    /// Writes a segment's entries (sorted by term); returns the bytes written.
    private func write(
        _ entries: [(term: [UInt8], value: [UInt8])],
        segment: UInt64,
        _ txn: LMDBTransaction
    ) throws
        -> Int
    {
        let postings = try environment.database(Self.postingsDatabase)
        let prefix = Self.bigEndian(segment)
        var bytes = 0
        var key = prefix
        for entry in entries {
            key.removeSubrange(prefix.count...)
            key += entry.term
            // The segment's id is above every stored one: each key goes after the last (an append).
            try txn.put(postings, key, entry.value)
            bytes += key.count + entry.value.count
        }
        return bytes
    }
}
