#if canImport(Glibc)
import Glibc
#endif

/// The token counts of the multi-token pieces one thread has merged, for one encoding: a piece's count is a
/// function of its bytes alone, and real text repeats its pieces (a word with the space before it that is not
/// one token: ` changelog`, ` Debian`, `.debian`), so the BPE merge loop need run once per piece, not once per
/// occurrence.
///
/// Pieces of up to ``maxBytes`` bytes (99% of the multi-token pieces of the latency-bound corpus) are kept by
/// their bytes packed in two integers and their length, direct-mapped in 8,192 slots of 24 bytes
/// (192 KB, ``defaultBits``); a newer piece takes an older one's slot. A key is the piece's whole bytes, never a hash of them,
/// so a count found is the count the merge loop would give. One table per thread (``PerThread``): lookups take
/// no lock and share no cache line, and the bound is `192 KB × threads that count × encodings` (the
/// cooperative pool has a thread per core).
final class BPEPieceCounts {
    /// The longest piece kept, in bytes.
    static let maxBytes = 16
    /// log2 of the number of slots of a table: 8,192 slots, 192 KB. On the latency-bound corpus, one pass from
    /// an empty table: 74% of the lookups answered with 8,192 slots, 77% with 16,384, 80% with 65,536 (and
    /// 80% is the most any table could: the rest are first sightings); the chunker's CPU was the same with
    /// each (docs/BENCHMARKS.md, "The BPE tokenizer's piece counts"), so the smallest.
    static let defaultBits = 13

    private struct Entry {
        var low: UInt64
        var high: UInt64
        /// `tokens << 5 | length`; 0 for an empty slot.
        var tag: UInt32
    }

    private let entries: UnsafeMutablePointer<Entry>
    /// log2 of the number of slots.
    private let bits: Int
    /// Lookups answered from the table, and those that merged (the piece was absent or its slot held another).
    private(set) var hits = 0
    private(set) var misses = 0

    /// A table of `1 << bits` slots.
    init(bits: Int) {
        self.bits = bits
        entries = .allocate(capacity: 1 << bits)
        entries.initialize(repeating: Entry(low: 0, high: 0, tag: 0), count: 1 << bits)
    }

    deinit {
        entries.deallocate()
    }

    /// Empties the table (its lookups' tallies stay).
    func removeAll() {
        entries.update(repeating: Entry(low: 0, high: 0, tag: 0), count: 1 << bits)
    }

    /// The bytes a table of `1 << bits` slots holds.
    static func bytes(bits: Int = defaultBits) -> Int { (1 << bits) * MemoryLayout<Entry>.stride }

    /// The count of the `length` bytes at `start` (3...``maxBytes``; `readable` bytes may be read from `start`):
    /// the kept one, or `merge()`, kept.
    @inline(__always)
    func count(_ start: UnsafePointer<UInt8>, _ length: Int, readable: Int, merge: () -> Int) -> Int {
        let (low, high) = BPERanks.pack(start, length, readable: readable)
        let mixed = (low ^ (high &* 0x9E37_79B9_7F4A_7C15) ^ UInt64(length)) &* 0xFF51_AFD7_ED55_8CCD
        let slot = Int(truncatingIfNeeded: mixed >> UInt64(64 - bits))
        let entry = entries[slot]
        if entry.tag & 31 == UInt32(length) && entry.low == low && entry.high == high {
            hits += 1
            return Int(entry.tag >> 5)
        }
        misses += 1
        let tokens = merge()
        // A piece of at most 16 bytes is at most 16 tokens.
        entries[slot] = Entry(low: low, high: high, tag: UInt32(tokens) << 5 | UInt32(length))
        return tokens
    }

    /// One ``BPEPieceCounts`` per thread, made on the thread's first count and freed when the thread exits.
    final class PerThread: @unchecked Sendable {
        /// Written once, in `init`.
        private var key = pthread_key_t()
        private let valid: Bool
        /// log2 of the number of slots of each table.
        let bits: Int

        /// Tables of `1 << bits` slots. The thread-specific key lives as long as the process (the tokenizers
        /// do); the process has at least 128 (`PTHREAD_KEYS_MAX`, 1,024 on glibc).
        init(bits: Int = BPEPieceCounts.defaultBits) {
            self.bits = bits
            valid =
                pthread_key_create(&key) { raw in
                    if let raw { Unmanaged<BPEPieceCounts>.fromOpaque(raw).release() }
                } == 0
        }

        /// The calling thread's table, or nil when the process has no thread-specific key left (then the
        /// tokenizer merges every piece, as without a table).
        var current: BPEPieceCounts? {
            guard valid else { return nil }
            if let raw = pthread_getspecific(key) {
                return Unmanaged<BPEPieceCounts>.fromOpaque(raw).takeUnretainedValue()
            }
            let counts = BPEPieceCounts(bits: bits)
            let raw = Unmanaged.passRetained(counts).toOpaque()
            guard pthread_setspecific(key, raw) == 0 else {
                Unmanaged<BPEPieceCounts>.fromOpaque(raw).release()
                return nil
            }
            return counts
        }
    }
}

/// A table belongs to one thread.
@available(*, unavailable)
extension BPEPieceCounts: Sendable {}
