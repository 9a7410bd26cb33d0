/// The counts of short texts a section's chunker has counted directly, by their bytes, for the one section.
///
/// With a section counted once (``TokenCountIndex``), what the chunker still counts itself is the few bytes
/// between each range's ends and the nearest cuts: the first and last word of every part, the words of an
/// overlap. On the latency-bound corpus that is about 20 such counts a chunk, of 7.5 bytes on average, and the
/// same words come back (`*`, `-`, `Thanks`, the names of a changelog): a count is a function of the text's
/// bytes alone, so a word counted once need not be tokenized again. Texts of up to 16 bytes are kept, by their
/// bytes packed in two integers and their length, in a small table where a newer text takes an older one's
/// slot (up to 1,024 slots, fewer for a short section, so that a document of many small sections does not
/// clear a large table for each); the chunks are the same with or without this.
final class ShortTextCounts {
    /// The longest text kept, in bytes.
    static let maxBytes = 16
    /// The most slots (24 bytes each), for a section of 16 KB or more.
    static let maxSlots = 1024

    private struct Entry {
        var low: UInt64
        var high: UInt64
        /// The length, or 0 for an empty slot.
        var length: Int32
        var tokens: Int32
    }

    private var entries: [Entry]
    /// log2 of the number of slots.
    private let bits: Int

    /// A table for a section of `textLength` UTF-8 bytes: a slot for every 16 bytes, from 16 to ``maxSlots``.
    init(textLength: Int) {
        var bits = 4
        while 1 << bits < Self.maxSlots && (1 << bits) * 16 < textLength { bits += 1 }
        self.bits = bits
        entries = [Entry](repeating: Entry(low: 0, high: 0, length: 0, tokens: 0), count: 1 << bits)
    }

    /// The count of `bytes[range]`: the kept one, or `count(range)` (kept when the text is short).
    func count(_ range: Range<Int>, in bytes: UnsafeBufferPointer<UInt8>, _ count: (Range<Int>) -> Int) -> Int {
        let length = range.count
        guard length > 0, length <= Self.maxBytes, let base = bytes.baseAddress else { return count(range) }
        var low: UInt64 = 0
        var high: UInt64 = 0
        if bytes.count - range.lowerBound >= 16 {
            let raw = UnsafeRawPointer(base + range.lowerBound)
            let first = raw.loadUnaligned(as: UInt64.self).littleEndian
            let second = raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian
            if length <= 8 {
                low = length == 8 ? first : first & ((1 &<< UInt64(8 * length)) &- 1)
            } else {
                low = first
                high = length == 16 ? second : second & ((1 &<< UInt64(8 * (length - 8))) &- 1)
            }
        } else {
            for position in 0..<length {
                let byte = UInt64(base[range.lowerBound + position])
                if position < 8 {
                    low |= byte &<< UInt64(8 * position)
                } else {
                    high |= byte &<< UInt64(8 * (position - 8))
                }
            }
        }
        let mixed = (low ^ (high &* 0x9E37_79B9_7F4A_7C15) ^ UInt64(length)) &* 0xFF51_AFD7_ED55_8CCD
        let slot = Int(truncatingIfNeeded: mixed >> UInt64(64 - bits))
        return entries.withUnsafeMutableBufferPointer { entries in
            let entry = entries[slot]
            if entry.length == Int32(length) && entry.low == low && entry.high == high { return Int(entry.tokens) }
            let tokens = count(range)
            if tokens <= Int(Int32.max) {
                entries[slot] = Entry(low: low, high: high, length: Int32(length), tokens: Int32(tokens))
            }
            return tokens
        }
    }
}
