/// One term's postings in one segment of the local keyword index, in their stored form:
/// `[varint last number][posting…]`, numbers ascending. A posting is `varint Δnumber` (from the previous
/// posting's number; the first from 0, so it is the number itself), then either
/// - `varint frequency << 1, varint record length` for a record scored whole, or
/// - `varint count << 1 | 1, count × (varint unit, varint frequency, varint unit length)` for a record
///   scored by its rows or records (`KeywordIndex+Units.swift`): the units that hold the term, ascending.
///
/// The last number up front lets two lists of consecutive segments be joined by copying bytes: only the
/// second list's first Δ is rewritten (``appendJoined(_:_:to:)``).
struct KeywordPostings {
    private(set) var body: [UInt8] = []
    /// The last posting's number (0 while empty: record numbers start at 1).
    private(set) var last: UInt64 = 0

    var isEmpty: Bool { body.isEmpty }

    /// Adds a posting; `number` must be above every number added before.
    mutating func append(number: UInt64, frequency: Int, length: Int) {
        precondition(number > last, "postings are kept in ascending record numbers")
        Self.putVarint(number - last, into: &body)
        Self.putVarint(UInt64(frequency) << 1, into: &body)
        Self.putVarint(UInt64(length), into: &body)
        last = number
    }

    /// Adds a posting of a record scored by units: the units holding the term (ascending), with its
    /// frequency in each and each one's length; `number` must be above every number added before.
    mutating func append(number: UInt64, units: [(unit: Int, frequency: Int, length: Int)]) {
        precondition(number > last, "postings are kept in ascending record numbers")
        Self.putVarint(number - last, into: &body)
        Self.putUnits(units, into: &body)
        last = number
    }

    /// Adds a posting read from a stored list (``forEachPosting(stored:_:)``), its bytes after the number
    /// copied as they are; `number` must be above every number added before.
    mutating func append<Bytes: Collection>(number: UInt64, encoded: Bytes) where Bytes.Element == UInt8 {
        precondition(number > last, "postings are kept in ascending record numbers")
        Self.putVarint(number - last, into: &body)
        body += encoded
        last = number
    }

    /// Whether a stored list holds a posting (more than its last number).
    static func hasPostings(stored: UnsafeBufferPointer<UInt8>) -> Bool {
        var offset = 0
        _ = varint(stored, &offset)
        return offset < stored.count
    }

    /// Appends to `out` the stored list of `count` stored lists joined in order (`list(0)`, `list(1)`, …, their
    /// numbers ascending from each list to the next): the stored list of every posting of them in order, without
    /// decoding them — the last number of the last list holding a posting up front, each list's first Δ
    /// rewritten, the rest copied. A merge joins each term's lists so.
    static func appendJoined(_ count: Int, _ list: (Int) -> UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        var joinedLast: UInt64 = 0
        for index in 0..<count {
            let stored = list(index)
            var offset = 0
            let storedLast = varint(stored, &offset)
            if offset < stored.count { joinedLast = storedLast }
        }
        putVarint(joinedLast, into: &out)
        var previous: UInt64 = 0
        for index in 0..<count {
            let stored = list(index)
            var offset = 0
            let storedLast = varint(stored, &offset)
            guard offset < stored.count else { continue }
            let first = varint(stored, &offset)  // the first Δ is the first number itself
            precondition(first > previous, "postings are kept in ascending record numbers")
            putVarint(first - previous, into: &out)
            out.append(contentsOf: UnsafeBufferPointer(rebasing: stored[offset...]))
            previous = storedLast
        }
    }

    /// A stored list with every number raised by `base`, without decoding it: only the last number up front
    /// and the first Δ change (a batch's postings are built with numbers from 1 before its write transaction
    /// knows where its numbers start).
    static func rebased(stored: [UInt8], by base: UInt64) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(stored.count + 10)
        stored.withUnsafeBufferPointer { rebase(stored: $0, by: base, into: &out) }
        return out
    }

    /// Appends to `out` the stored list `stored` with every number raised by `base` (``rebased(stored:by:)``),
    /// without an array of its own.
    static func rebase(stored: UnsafeBufferPointer<UInt8>, by base: UInt64, into out: inout [UInt8]) {
        var offset = 0
        let storedLast = varint(stored, &offset)
        guard base > 0, offset < stored.count else {
            out.append(contentsOf: stored)
            return
        }
        let first = varint(stored, &offset)
        putVarint(storedLast + base, into: &out)
        putVarint(first + base, into: &out)
        out.append(contentsOf: UnsafeBufferPointer(rebasing: stored[offset...]))
    }

    /// The stored bytes.
    var stored: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(body.count + 10)
        appendStored(to: &out)
        return out
    }

    /// Appends the stored bytes to `out`.
    func appendStored(to out: inout [UInt8]) {
        Self.putVarint(last, into: &out)
        out += body
    }

    /// Calls `body` with every unit a stored list scores, in ascending numbers (and units): a record scored
    /// whole is its unit 0, with the record's length.
    static func forEach<Bytes: RandomAccessCollection>(
        stored: Bytes,
        _ body: (_ number: UInt64, _ unit: Int, _ frequency: Int, _ length: Int) throws -> Void
    ) rethrows where Bytes.Element == UInt8, Bytes.Index == Int {
        var offset = stored.startIndex
        _ = varint(stored, &offset)
        var number: UInt64 = 0
        while offset < stored.endIndex {
            number += varint(stored, &offset)
            let head = varint(stored, &offset)
            guard head & 1 == 1 else {
                try body(number, 0, Int(head >> 1), Int(varint(stored, &offset)))
                continue
            }
            for _ in 0..<(head >> 1) where offset < stored.endIndex {
                let unit = Int(varint(stored, &offset))
                let frequency = Int(varint(stored, &offset))
                try body(number, unit, frequency, Int(varint(stored, &offset)))
            }
        }
    }

    /// Calls `body` with every posting of a stored list, in ascending numbers: its number and its bytes after
    /// the number (to copy with ``append(number:encoded:)``).
    static func forEachPosting(
        stored: [UInt8],
        _ body: (_ number: UInt64, _ encoded: ArraySlice<UInt8>) throws -> Void
    ) rethrows {
        try forEachPosting(stored: stored[...], body)
    }

    /// Calls `body` with every posting of a stored list, in ascending numbers (``forEachPosting(stored:_:)``).
    static func forEachPosting(
        stored: ArraySlice<UInt8>,
        _ body: (_ number: UInt64, _ encoded: ArraySlice<UInt8>) throws -> Void
    ) rethrows {
        var offset = stored.startIndex
        _ = varint(stored, &offset)
        var number: UInt64 = 0
        while offset < stored.endIndex {
            number += varint(stored, &offset)
            let start = offset
            let head = varint(stored, &offset)
            let fields = head & 1 == 1 ? 3 * (head >> 1) : 1
            var read: UInt64 = 0
            while read < fields && offset < stored.endIndex {
                _ = varint(stored, &offset)
                read += 1
            }
            try body(number, stored[start..<offset])
        }
    }

    /// Puts a posting's bytes after its number for a record scored by units (``append(number:units:)``).
    static func putUnits(_ units: [(unit: Int, frequency: Int, length: Int)], into out: inout [UInt8]) {
        putVarint(UInt64(units.count) << 1 | 1, into: &out)
        for unit in units {
            putVarint(UInt64(unit.unit), into: &out)
            putVarint(UInt64(unit.frequency), into: &out)
            putVarint(UInt64(unit.length), into: &out)
        }
    }

    static func putVarint(_ value: UInt64, into out: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        out.append(UInt8(value))
    }

    /// The bytes ``putVarint(_:into:)`` writes for `value`.
    static func varintSize(_ value: Int) -> Int {
        var value = UInt64(value)
        var size = 1
        while value >= 0x80 {
            value >>= 7
            size += 1
        }
        return size
    }

    /// Reads a varint at `offset` and moves past it (a list cut short reads as zeros, never out of bounds).
    static func varint<Bytes: RandomAccessCollection>(_ bytes: Bytes, _ offset: inout Int) -> UInt64
    where Bytes.Element == UInt8, Bytes.Index == Int {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while offset < bytes.endIndex {
            let byte = bytes[offset]
            offset += 1
            if shift < 64 { value |= UInt64(byte & 0x7F) << shift }
            if byte < 0x80 { break }
            shift += 7
        }
        return value
    }
}
