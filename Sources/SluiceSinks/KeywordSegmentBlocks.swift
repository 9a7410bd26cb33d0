import Foundation

/// How a keyword segment's entries are stored in LMDB: consecutive terms packed into blocks, one key a block.
///
/// A block's key is the segment's prefix and its first term; its value is its entries end to end, each
/// `varint term length, term, varint list length, stored list` (``KeywordPostings``), in term order. A block
/// closes before it would pass ``blockBytes``, so it stays on its leaf page (LMDB keeps a node of up to about
/// 2,000 bytes there); a list longer than that is a block of its own (on pages of its own).
///
/// A key per term cost an LMDB put a term in the write transaction that adds a segment, and a cursor step, a
/// put and a delete a term in each merge: most lists hold one or two postings (a few bytes), so most of a
/// merge went to LMDB's work per key, not to the bytes (docs/BENCHMARKS.md, "The keyword segments in blocks").
/// A term is found in the block whose first term is the last at or before it (``LMDBTransaction/withFloor(_:_:_:)``).
enum KeywordSegmentBlocks {
    /// The most bytes of a block that holds more than one entry.
    static let blockBytes = 1_800

    /// Packs entries, given in term order, into blocks; `write` is called with each block's first term and
    /// value as it closes.
    struct Packer {
        private var first: [UInt8] = []
        private var block: [UInt8] = []
        private var entries = 0

        /// Adds `term` with its stored list `value`; writes the open block first when the entry would take it
        /// past ``KeywordSegmentBlocks/blockBytes``.
        mutating func add<Term: Collection<UInt8>>(
            term: Term,
            value: [UInt8],
            write: (_ first: [UInt8], _ block: [UInt8]) throws -> Void
        ) rethrows {
            let size =
                KeywordPostings.varintSize(term.count) + term.count
                + KeywordPostings.varintSize(value.count) + value.count
            if entries > 0 && block.count + size > KeywordSegmentBlocks.blockBytes { try finish(write: write) }
            if entries == 0 {
                first.removeAll(keepingCapacity: true)
                first.append(contentsOf: term)
            }
            KeywordPostings.putVarint(UInt64(term.count), into: &block)
            block.append(contentsOf: term)
            KeywordPostings.putVarint(UInt64(value.count), into: &block)
            block.append(contentsOf: value)
            entries += 1
        }

        /// Writes the open block, if any.
        mutating func finish(write: (_ first: [UInt8], _ block: [UInt8]) throws -> Void) rethrows {
            guard entries > 0 else { return }
            try write(first, block)
            block.removeAll(keepingCapacity: true)
            entries = 0
        }
    }

    /// Calls `body` with each entry of `block` (term, stored list), in order. A block that does not decode (a
    /// length past its end) ends where it stops decoding.
    static func forEachEntry(
        in block: UnsafeRawBufferPointer,
        _ body: (_ term: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Void
    ) rethrows {
        var offset = 0
        while offset < block.count {
            guard let term = field(block, &offset), let value = field(block, &offset) else { return }
            try body(term, value)
        }
    }

    /// The stored list of `term` in `block`, or nil when the block does not hold it (its terms are in order:
    /// the search stops at the first term after it).
    static func value(of term: [UInt8], in block: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        var offset = 0
        while offset < block.count {
            guard let found = field(block, &offset), let value = field(block, &offset) else { return nil }
            let order = term.withUnsafeBytes { KeywordSegmentEntries.compare(found, $0) }
            if order == 0 { return value }
            if order > 0 { return nil }
        }
        return nil
    }

    /// The length-prefixed field at `offset`, moving past it; nil when it runs past the block's end.
    private static func field(_ block: UnsafeRawBufferPointer, _ offset: inout Int) -> UnsafeRawBufferPointer? {
        var length: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < block.count, shift < 64 else { return nil }
            let byte = block[offset]
            offset += 1
            length |= UInt64(byte & 0x7f) << shift
            if byte < 0x80 { break }
            shift += 7
        }
        guard length <= UInt64(block.count - offset) else { return nil }
        let start = offset
        offset += Int(length)
        return UnsafeRawBufferPointer(rebasing: block[start..<offset])
    }
}
