import Foundation

/// A segment's entries in one piece: each term's bytes and its stored list (``KeywordPostings``), sorted by
/// term, end to end in two arrays. A batch's segment (``KeywordIndex/PreparedBatch``) carries them this way
/// from the upsert's caller to the writer thread, which writes each entry from these arrays through two
/// buffers it reuses (`KeywordIndex+Segments.swift`): no array is made per term on either side (an array per
/// term for its postings, another for its stored list, its term and its rebased list were about a sixth of
/// the segment's CPU, tokenizing included: docs/BENCHMARKS.md). A merge (`KeywordIndex+Merging.swift`) reads each input segment
/// into one and writes the merged segment from one.
struct KeywordSegmentEntries: Sendable {
    /// Every entry's term, end to end; the i-th is `terms[termEnds[i - 1]..<termEnds[i]]` (from 0 for the first).
    private(set) var terms: [UInt8] = []
    /// Every entry's stored list, end to end, indexed as `terms` is.
    private(set) var values: [UInt8] = []
    private(set) var termEnds: [Int] = []
    private(set) var valueEnds: [Int] = []

    /// How many entries it holds.
    var count: Int { termEnds.count }

    var isEmpty: Bool { termEnds.isEmpty }

    /// The bytes of every term, end to end.
    var termBytes: Int { terms.count }

    /// The bytes of every stored list, end to end.
    var valueBytes: Int { values.count }

    /// Room for `count` entries of `termBytes` and `valueBytes` in all.
    mutating func reserve(count: Int, termBytes: Int, valueBytes: Int) {
        terms.reserveCapacity(termBytes)
        values.reserveCapacity(valueBytes)
        termEnds.reserveCapacity(count)
        valueEnds.reserveCapacity(count)
    }

    /// Adds an entry after the others (terms must come in byte order): `term`, and the stored list that
    /// `value` appends to the array it is given.
    mutating func append(term: some Collection<UInt8>, value: (inout [UInt8]) -> Void) {
        terms.append(contentsOf: term)
        termEnds.append(terms.count)
        value(&values)
        valueEnds.append(values.count)
    }

    /// The term of entry `index`.
    func term(_ index: Int) -> ArraySlice<UInt8> {
        terms[(index == 0 ? 0 : termEnds[index - 1])..<termEnds[index]]
    }

    /// The stored list of entry `index`.
    func value(_ index: Int) -> ArraySlice<UInt8> {
        values[(index == 0 ? 0 : valueEnds[index - 1])..<valueEnds[index]]
    }

    /// `a` against `b` in the order terms are stored (`memcmp`'s byte order, a term before any longer one it
    /// begins, as LMDB orders keys): negative, zero or positive.
    static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let common = min(a.count, b.count)
        if common > 0, let x = a.baseAddress, let y = b.baseAddress {
            let order = memcmp(x, y, common)
            if order != 0 { return Int(order) }
        }
        return a.count - b.count
    }

    /// Calls `body` with each entry's term and stored list, in order.
    func forEachEntry(
        _ body: (_ term: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) throws -> Void
    ) rethrows {
        try terms.withUnsafeBufferPointer { terms in
            try values.withUnsafeBufferPointer { values in
                var termStart = 0
                var valueStart = 0
                for index in termEnds.indices {
                    let termEnd = termEnds[index]
                    let valueEnd = valueEnds[index]
                    try body(
                        UnsafeBufferPointer(rebasing: terms[termStart..<termEnd]),
                        UnsafeBufferPointer(rebasing: values[valueStart..<valueEnd])
                    )
                    termStart = termEnd
                    valueStart = valueEnd
                }
            }
        }
    }

    /// The entries' arrays, read in place (``withUnsafeEntries(_:)``): no reference is counted per look-up.
    struct UnsafeEntries {
        let terms: UnsafeBufferPointer<UInt8>
        let values: UnsafeBufferPointer<UInt8>
        let termEnds: UnsafeBufferPointer<Int>
        let valueEnds: UnsafeBufferPointer<Int>

        var count: Int { termEnds.count }

        func term(_ index: Int) -> UnsafeBufferPointer<UInt8> {
            UnsafeBufferPointer(rebasing: terms[(index == 0 ? 0 : termEnds[index - 1])..<termEnds[index]])
        }

        func value(_ index: Int) -> UnsafeBufferPointer<UInt8> {
            UnsafeBufferPointer(rebasing: values[(index == 0 ? 0 : valueEnds[index - 1])..<valueEnds[index]])
        }
    }

    /// Calls `body` with the entries' arrays in place.
    func withUnsafeEntries<R>(_ body: (UnsafeEntries) throws -> R) rethrows -> R {
        try terms.withUnsafeBufferPointer { terms in
            try values.withUnsafeBufferPointer { values in
                try termEnds.withUnsafeBufferPointer { termEnds in
                    try valueEnds.withUnsafeBufferPointer { valueEnds in
                        try body(UnsafeEntries(terms: terms, values: values, termEnds: termEnds, valueEnds: valueEnds))
                    }
                }
            }
        }
    }

    /// Calls `body` with every one of `lists`' arrays in place, in order.
    static func withUnsafeEntries<R>(
        of lists: ArraySlice<KeywordSegmentEntries>,
        _ opened: [UnsafeEntries] = [],
        _ body: ([UnsafeEntries]) throws -> R
    ) rethrows -> R {
        guard let first = lists.first else { return try body(opened) }
        return try first.withUnsafeEntries { try withUnsafeEntries(of: lists.dropFirst(), opened + [$0], body) }
    }

    /// The entries as arrays (tests compare them).
    var array: [(term: [UInt8], value: [UInt8])] {
        var out: [(term: [UInt8], value: [UInt8])] = []
        out.reserveCapacity(count)
        forEachEntry { out.append((Array($0), Array($1))) }
        return out
    }
}
