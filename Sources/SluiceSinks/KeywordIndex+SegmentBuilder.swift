import SluiceCore

/// Collecting a segment's postings in memory before it is written (`KeywordIndex+Segments.swift`).
///
/// A record is counted straight into the segment's own term table (``SegmentBuilder/add(number:record:)``):
/// each term is hashed and looked up once, and its frequency in the record kept beside the segment's term,
/// marked with the record it was last counted for. Building a ``KeywordIndex/Counts`` table per record and
/// then inserting each of its terms into the segment's table hashed every distinct term twice and allocated
/// a table per record (0.41 CPU-s of the 8 MB latency corpus's load, docs/BENCHMARKS.md). A record scored by
/// its rows or records (`KeywordIndex+Units.swift`) needs its own table to number its units' terms, so it is
/// still counted apart and added with ``SegmentBuilder/add(number:_:)``: the segment's bytes are the same
/// either way (`KeywordSegmentBytesTests`).
extension KeywordIndex {
    /// The postings of the records a transaction writes, collected in memory and written as one segment.
    struct SegmentBuilder {
        /// The segment's terms (bytes), and each one's postings by its number there.
        var terms = KeywordTermTable()
        var postings: [KeywordPostings] = []
        var records = 0
        var first: UInt64 = 0
        var last: UInt64 = 0
        /// For each term of `terms`: the value of `records` when it was last counted, and its frequency in
        /// that record.
        private var countedIn: [Int32] = []
        private var frequencies: [Int32] = []
        /// The terms of the record being counted, in the order first met.
        private var counted: [Int32] = []

        /// Adds `record` (its text and context, ``KeywordIndex/context(of:)``) as record `number`, above every
        /// number added before; returns its length in terms.
        mutating func add(number: UInt64, record: VectorRecord) -> Int {
            let context = KeywordIndex.context(of: record)
            let text = context.isEmpty ? record.text : record.text + "\n" + context
            if let units = KeywordIndex.units(of: record) {
                var whole = KeywordIndex.counts(of: text)
                whole.units = Units(units, context: KeywordIndex.counts(of: context), whole: whole)
                add(number: number, whole)
                return whole.length
            }
            return add(number: number, text: text)
        }

        /// Counts the terms of `text`, scored whole, into the segment as record `number`; returns its length.
        mutating func add(number: UInt64, text: String) -> Int {
            begin(number)
            let mark = Int32(truncatingIfNeeded: records)
            var length = 0
            KeywordIndex.forEachCountedTerm(of: text) { term in
                length += 1
                guard let term else { return }
                let found = insert(term)
                if countedIn[found] == mark {
                    frequencies[found] += 1
                } else {
                    countedIn[found] = mark
                    frequencies[found] = 1
                    counted.append(Int32(truncatingIfNeeded: found))
                }
            }
            for term in counted {
                postings[Int(term)].append(number: number, frequency: Int(frequencies[Int(term)]), length: length)
            }
            counted.removeAll(keepingCapacity: true)
            return length
        }

        /// Adds a record counted apart (``KeywordIndex/Counts``) as record `number`.
        mutating func add(number: UInt64, _ counts: Counts) {
            begin(number)
            counts.table.bytes.withUnsafeBufferPointer { bytes in
                var start = 0
                for (index, frequency) in counts.frequencies.enumerated() {
                    let end = start + counts.table.term(index).count
                    let term = insert(UnsafeBufferPointer(rebasing: bytes[start..<end]))
                    if let units = counts.units {
                        postings[term].append(number: number, units: units.postings(of: index))
                    } else {
                        postings[term].append(number: number, frequency: frequency, length: counts.length)
                    }
                    start = end
                }
            }
        }

        /// The postings as a segment's entries: each term's bytes and stored list, sorted by term.
        var entries: [(term: [UInt8], value: [UInt8])] {
            terms.sortedNumbers().map { (term: Array(terms.term($0)), value: postings[$0].stored) }
        }

        private mutating func begin(_ number: UInt64) {
            if records == 0 { first = number }
            records += 1
            last = number
        }

        /// The segment's number of `term`, its postings and counters made if it is new.
        private mutating func insert(_ term: UnsafeBufferPointer<UInt8>) -> Int {
            let found = terms.insert(term)
            if found.inserted {
                postings.append(KeywordPostings())
                countedIn.append(0)
                frequencies.append(0)
            }
            return found.number
        }
    }
}
