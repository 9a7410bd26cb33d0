import Foundation
import SluiceCore

/// A batch's keyword segment, built before its write transaction (on the upsert caller's task, off the
/// store's writer thread), so that the transaction only writes it.
///
/// Record numbers are handed out inside the transaction (they follow the numbers already stored). The
/// batch is therefore built with its own numbers 1…n, in the order the transaction gives them, and the
/// transaction raises them by the store's last number as it writes each term's list
/// (``KeywordPostings/rebase(stored:by:into:)``: two varints rewritten, the rest copied). The segment written is
/// byte for byte the one a build inside the transaction would write.
extension KeywordIndex {
    struct PreparedBatch: Sendable {
        /// The records to index, each id once (the last of an id in the batch wins), in the order their numbers
        /// are given: the i-th gets the store's next number + i.
        var records: [(id: [UInt8], length: Int)] = []
        /// The segment's entries, sorted by term, with numbers 1…`records.count`.
        var entries = KeywordSegmentEntries()

        /// Builds the batch of `records`, their terms counted straight into the segment's table
        /// (``SegmentBuilder/add(number:record:)``).
        init(_ records: [VectorRecord]) {
            let ids = records.map { Array($0.id.rawValue.utf8) }
            var latest: [[UInt8]: Int] = [:]
            for (position, id) in ids.enumerated() { latest[id] = position }
            var segment = SegmentBuilder()
            for (position, record) in records.enumerated() where latest[ids[position]] == position {
                let length = segment.add(number: UInt64(self.records.count + 1), record: record)
                self.records.append((ids[position], length))
            }
            // Records without a term have no postings: no segment needs to cover their numbers.
            entries = segment.entries
        }
    }
}
