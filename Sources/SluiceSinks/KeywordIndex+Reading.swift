import Foundation
import SluiceLMDB

/// Reading the keyword index for a search (a read transaction).
extension KeywordIndex {
    /// What a search needs besides the postings: the corpus, the segments, the dead record numbers whose
    /// postings are still stored, and the next record number (every number given is below it).
    struct Snapshot {
        var corpus: BM25.Corpus
        var segments: [KeywordSegment]
        var dead: Set<UInt64>
        var next: UInt64
    }

    func snapshot(_ txn: LMDBTransaction) throws -> Snapshot {
        let state = try load(txn)
        var dead = Set<UInt64>()
        if state.segments.contains(where: { $0.dead > 0 }) {
            try txn.forEach(environment.database(Self.recordsDatabase), from: [UInt8(ascii: "d")]) { key, _ in
                guard key.count == 9, key[0] == UInt8(ascii: "d") else { return false }
                dead.insert(Self.bigEndianInteger(key[1...]))
                return true
            }
        }
        return Snapshot(corpus: state.corpus, segments: state.segments, dead: dead, next: state.nextNumber)
    }

    /// The live postings of `term`: one block read per segment. A posting is one unit of a record (unit 0 for a
    /// record scored whole, `KeywordIndex+Units.swift`), with the term's frequency and the unit's length;
    /// `records` counts the records among them (the term's df). With `admission` (a search restricted by access
    /// control, ``LocalKeywordAccess``), only the postings of records its caller may read.
    func postings(
        of term: String,
        in snapshot: Snapshot,
        admitting admission: LocalKeywordAccess.Admission? = nil,
        _ txn: LMDBTransaction
    ) throws
        -> (records: Int, list: [(id: UInt64, unit: Int, frequency: Int, length: Int)])
    {
        let postings = try environment.database(Self.postingsDatabase)
        let termBytes = Array(term.utf8)
        var list: [(id: UInt64, unit: Int, frequency: Int, length: Int)] = []
        var records = 0
        var previous: UInt64 = 0
        for segment in snapshot.segments {
            let prefix = segment.prefix
            // The block whose first term is the last at or before this one (``KeywordSegmentBlocks``); the list is
            // read where it lies in the block, not copied out of it first.
            _ = try txn.withFloor(postings, prefix + termBytes) { key, block in
                guard key.count > prefix.count, key.starts(with: prefix),
                    let value = KeywordSegmentBlocks.value(of: termBytes, in: block)
                else { return }
                KeywordPostings.forEach(stored: value) { number, unit, frequency, length in
                    guard !snapshot.dead.contains(number), admission?.admits(number) ?? true else { return }
                    // Numbers rise through a list and from one segment to the next.
                    if number != previous { records += 1 }
                    previous = number
                    list.append((number, unit, frequency, length))
                }
            }
        }
        return (records, list)
    }

    /// The index's numbering (``LocalKeywordAccess/epochKey``; 0 for a store made before it was written).
    func epoch(_ txn: LMDBTransaction) throws -> UInt64 {
        guard let bytes = try txn.get(environment.database("meta"), LocalKeywordAccess.epochKey), bytes.count == 8
        else {
            return 0
        }
        return Self.integer(bytes, at: 0)
    }

    /// The id of a live record number.
    func id(of number: UInt64, _ txn: LMDBTransaction) throws -> [UInt8]? {
        try txn.get(environment.database(Self.recordsDatabase), Self.numberKey(number))
    }
}
