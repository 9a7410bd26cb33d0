import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// A batch's keyword segment, as ``KeywordIndex/PreparedBatch`` builds it, must not change its bytes when
/// the way it is built changes: the same records give the same entries (terms and stored postings, rows and
/// records included) and the same records' lengths as main's build at 7e6440c (``reference(_:)``), before
/// terms were counted straight into the segment's table and sorted with `memcmp`.
@Suite struct KeywordSegmentBytesTests {
    typealias Keyword = LocalSinkKeywordTests

    /// A seeded batch: prose of every kind of term the tokenizer meets (KeywordTermCountsTests' pieces),
    /// titled and untitled records, headings, table and JSON chunks scored by their units, ids repeated
    /// (the last wins), and records without a term.
    static func batch(seed: UInt64) -> [VectorRecord] {
        var generator = SplitMix64(seed: seed)
        let texts = KeywordTermCountsTests.texts(seed: seed)
        var records: [VectorRecord] = []
        for (index, text) in texts.enumerated() {
            let id = "r\(generator.next() % 200)"
            var record = Keyword.record(id, text, key: "docs/file-\(index % 7).txt")
            switch generator.next() % 6 {
            case 0: record.metadata["title"] = .string(texts[(index + 1) % texts.count])
            case 1: record.metadata["headings"] = .strings(["Invoices and totals", texts[(index + 2) % texts.count]])
            case 2:
                let rows = (0..<Int(generator.next() % 5)).map { texts[(index + $0 + 3) % texts.count] }
                record = Keyword.record(id, rows.joined(separator: "\n"), key: "tables/t\(index).csv")
                record.metadata["format"] = .string("csv")
            case 3:
                let units = (0..<Int(generator.next() % 4)).map {
                    "$.items[\($0)].name: " + texts[(index + $0) % texts.count]
                }
                record = Keyword.record(id, units.joined(separator: "\n\n"), key: "data/d\(index).json")
                record.metadata["format"] = .string("json")
            default: break
            }
            records.append(record)
        }
        return records
    }

    /// The batch as main built it at 7e6440c, kept here as it was: each record counted apart into its own
    /// table (``KeywordIndex/counts(of:)``), each of its terms then inserted into the segment's table, and the
    /// terms sorted with `lexicographicallyPrecedes`.
    static func reference(_ records: [VectorRecord]) -> Reference {
        var latest: [[UInt8]: Int] = [:]
        for (position, record) in records.enumerated() { latest[Array(record.id.rawValue.utf8)] = position }
        var reference = Reference()
        var terms = KeywordTermTable()
        var postings: [KeywordPostings] = []
        for (position, record) in records.enumerated() where latest[Array(record.id.rawValue.utf8)] == position {
            let counts = KeywordIndex.counts(of: record)
            reference.records.append((Array(record.id.rawValue.utf8), counts.length))
            let number = UInt64(reference.records.count)
            counts.table.bytes.withUnsafeBufferPointer { bytes in
                var start = 0
                for (index, frequency) in counts.frequencies.enumerated() {
                    let end = start + counts.table.term(index).count
                    let found = terms.insert(UnsafeBufferPointer(rebasing: bytes[start..<end]))
                    if found.inserted { postings.append(KeywordPostings()) }
                    if let units = counts.units {
                        postings[found.number].append(number: number, units: units.postings(of: index))
                    } else {
                        postings[found.number].append(number: number, frequency: frequency, length: counts.length)
                    }
                    start = end
                }
            }
        }
        reference.entries = postings.indices.map { (term: Array(terms.term($0)), value: postings[$0].stored) }
            .sorted { $0.term.lexicographicallyPrecedes($1.term) }
        return reference
    }

    /// A batch's records and entries as main's build gave them (a ``KeywordIndex/PreparedBatch`` then).
    struct Reference {
        var records: [(id: [UInt8], length: Int)] = []
        var entries: [(term: [UInt8], value: [UInt8])] = []
    }

    static func same(_ a: KeywordIndex.PreparedBatch, _ b: Reference) -> Bool {
        let entries = a.entries.array
        return a.records.count == b.records.count && zip(a.records, b.records).allSatisfy { $0 == $1 }
            && entries.count == b.entries.count && zip(entries, b.entries).allSatisfy { $0 == $1 }
    }

    @Test("a batch's segment has the bytes main built, rows and records included", arguments: [11, 12, 13, 14])
    func segmentBytes(seed: UInt64) {
        let records = Self.batch(seed: seed)
        let batch = KeywordIndex.PreparedBatch(records)
        let reference = Self.reference(records)
        #expect(batch.entries.count > 100)
        #expect(batch.records.count < records.count)  // some ids repeat: the last of each wins
        #expect(
            batch.entries.array.contains { entry in
                var units = false
                KeywordPostings.forEach(stored: entry.value) { _, unit, _, _ in units = units || unit > 0 }
                return units
            }
        )
        #expect(Self.same(batch, reference))
    }

    @Test("a segment's terms are in byte order, a term before every longer one it begins")
    func termOrder() {
        var table = KeywordTermTable()
        let terms: [[UInt8]] = [
            [0x62], [0x61, 0x62], [0x61], [], [0xC3, 0xA9], [0x61, 0x61, 0x61], [0x7A], [0x61, 0x61],
        ]
        for term in terms { _ = term.withUnsafeBufferPointer { table.insert($0) } }
        #expect(table.sortedNumbers().map { terms[$0] } == terms.sorted { $0.lexicographicallyPrecedes($1) })
    }

    @Test("terms sharing their first 8 bytes, or holding zero bytes, sort as their bytes do", arguments: [1, 2, 3])
    func termOrderBeyondThePrefix(seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        var table = KeywordTermTable()
        var terms: [[UInt8]] = []
        let stems: [[UInt8]] = [[], Array("internat".utf8), Array("internationalis".utf8), [0, 0, 0, 0, 0, 0, 0, 0]]
        for _ in 0..<2_000 {
            var term = stems[Int(generator.next() % UInt64(stems.count))]
            // Short tails of few distinct bytes (0, 1, 'a', 'b', 0xFF): many ties and prefixes of each other.
            for _ in 0..<Int(generator.next() % 12) {
                term.append([0, 1, 0x61, 0x62, 0xFF][Int(generator.next() % 5)])
            }
            if term.withUnsafeBufferPointer({ table.insert($0) }).inserted { terms.append(term) }
        }
        #expect(terms.count > 500)
        #expect(table.sortedNumbers().map { terms[$0] } == terms.sorted { $0.lexicographicallyPrecedes($1) })
    }
}
