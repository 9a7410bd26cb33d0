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
///
/// The postings are kept in one log, in the order they are added (each one's bytes after its record number,
/// as ``KeywordPostings`` stores them), each term's chained from its first to its last; ``SegmentBuilder/entries``
/// walks each term's chain into its stored list. An array per term (a ``KeywordPostings`` each, copied again
/// into its stored list) cost an allocation or more per term and record.
extension KeywordIndex {
    /// The postings of the records a transaction writes, collected in memory and written as one segment.
    struct SegmentBuilder {
        /// The segment's terms (bytes), numbered in the order first met.
        var terms = KeywordTermTable()
        var records = 0
        var first: UInt64 = 0
        var last: UInt64 = 0
        /// What is kept of each term of `terms`, by number (one array of them, not one a field: each append
        /// checks one array's uniqueness and capacity, not four).
        private struct TermState {
            /// The value of `records` when the term was last counted, and its frequency in that record.
            var countedIn: Int32 = 0
            var frequency: Int32 = 0
            /// Its first and last posting (indexes into `postings`), -1 before the first.
            var first = -1
            var last = -1
        }
        private var states: [TermState] = []
        /// A posting: its record's number, the next posting of its term (-1 after the last), and where its
        /// bytes end in `log` (they begin where the previous posting's end).
        private struct Posting {
            var number: UInt64
            var next: Int
            var end: Int
        }
        /// Every posting, in the order added.
        private var postings: [Posting] = []
        /// Each posting's bytes after its record number, end to end.
        private var log: [UInt8] = []
        /// The terms of the record being counted, in the order first met.
        private var counted: [Int32] = []

        /// Whether no term has a posting (records without a term add none).
        var isEmpty: Bool { terms.count == 0 }

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
                if states[found].countedIn == mark {
                    states[found].frequency += 1
                } else {
                    states[found].countedIn = mark
                    states[found].frequency = 1
                    counted.append(Int32(truncatingIfNeeded: found))
                }
            }
            for term in counted {
                KeywordPostings.putVarint(UInt64(states[Int(term)].frequency) << 1, into: &log)
                KeywordPostings.putVarint(UInt64(length), into: &log)
                post(Int(term), number: number)
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
                        KeywordPostings.putUnits(units.postings(of: index), into: &log)
                    } else {
                        KeywordPostings.putVarint(UInt64(frequency) << 1, into: &log)
                        KeywordPostings.putVarint(UInt64(counts.length), into: &log)
                    }
                    post(term, number: number)
                    start = end
                }
            }
        }

        /// The postings as a segment's entries: each term's bytes and stored list, sorted by term.
        var entries: KeywordSegmentEntries {
            var out = KeywordSegmentEntries()
            // A stored list is its last number and each posting's Δnumber before its bytes: a varint each.
            out.reserve(
                count: terms.count,
                termBytes: terms.bytes.count,
                valueBytes: log.count + 3 * postings.count + 5 * terms.count
            )
            log.withUnsafeBufferPointer { log in
                for term in terms.sortedNumbers() {
                    out.append(term: terms.term(term)) { value in
                        KeywordPostings.putVarint(postings[states[term].last].number, into: &value)
                        var previous: UInt64 = 0
                        var posting = states[term].first
                        while posting >= 0 {
                            let number = postings[posting].number
                            KeywordPostings.putVarint(number - previous, into: &value)
                            let start = posting == 0 ? 0 : postings[posting - 1].end
                            value.append(contentsOf: UnsafeBufferPointer(rebasing: log[start..<postings[posting].end]))
                            previous = number
                            posting = postings[posting].next
                        }
                    }
                }
            }
            return out
        }

        private mutating func begin(_ number: UInt64) {
            if records == 0 { first = number }
            records += 1
            last = number
        }

        /// The segment's number of `term`, its counters made if it is new.
        private mutating func insert(_ term: UnsafeBufferPointer<UInt8>) -> Int {
            let found = terms.insert(term)
            if found.inserted { states.append(TermState()) }
            return found.number
        }

        /// Chains the posting whose bytes were just put at the end of `log` to `term`'s, as record `number`'s
        /// (above every number `term` has a posting for).
        private mutating func post(_ term: Int, number: UInt64) {
            let posting = postings.count
            postings.append(Posting(number: number, next: -1, end: log.count))
            let last = states[term].last
            if last < 0 {
                states[term].first = posting
            } else {
                precondition(number > postings[last].number, "postings are kept in ascending record numbers")
                postings[last].next = posting
            }
            states[term].last = posting
        }
    }
}
