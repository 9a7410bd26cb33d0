/// One segment of the local keyword index, as its directory lists it: the postings one write transaction
/// added (level 0), or several consecutive segments merged (a level up).
///
/// Record numbers rise with every record written, so consecutive segments hold disjoint, rising ranges of
/// numbers (`first`…`last`), and a record's postings are all in the segment whose range holds its number.
struct KeywordSegment: Equatable {
    /// The key prefix of its postings (big endian), never re-used.
    var id: UInt64
    var level: Int
    /// The record numbers it covers (whether or not each record had a term).
    var first: UInt64
    var last: UInt64
    /// Records written with numbers in the range, and how many of them were replaced or deleted since.
    var records: Int
    var dead: Int
    /// Bytes of its keys and values.
    var bytes: Int

    func holds(_ number: UInt64) -> Bool { first <= number && number <= last }

    var policyView: KeywordMergePolicy.Segment {
        .init(level: level, records: records, dead: dead, bytes: bytes)
    }

    /// The prefix of its postings' keys.
    var prefix: [UInt8] { KeywordIndex.bigEndian(id) }

    private static let fieldCount = 7

    /// The directory (in `meta`): seven little-endian UInt64 per segment, in record-number order.
    static func encode(_ segments: [KeywordSegment]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(segments.count * fieldCount * 8)
        for segment in segments {
            let fields = [
                segment.id, UInt64(segment.level), segment.first, segment.last, UInt64(segment.records),
                UInt64(segment.dead), UInt64(segment.bytes),
            ]
            for field in fields { withUnsafeBytes(of: field.littleEndian) { out += $0 } }
        }
        return out
    }

    static func decode(_ bytes: [UInt8]) -> [KeywordSegment] {
        let size = fieldCount * 8
        return stride(from: 0, to: bytes.count - bytes.count % size, by: size).map { start in
            func field(_ index: Int) -> UInt64 { KeywordIndex.integer(bytes, at: start + index * 8) }
            return KeywordSegment(
                id: field(0),
                level: Int(field(1)),
                first: field(2),
                last: field(3),
                records: Int(field(4)),
                dead: Int(field(5)),
                bytes: Int(field(6))
            )
        }
    }
}
