import Foundation
import SluiceCore

#if canImport(Glibc)
import Glibc
#endif

/// A BPE rank table (token bytes → rank = token id), as in tiktoken's `.tiktoken` files: one
/// `base64(token) rank` per line.
///
/// Lookups happen in the merge loop for every adjacent pair, so they avoid hashing byte arrays: pairs of
/// bytes are a direct table, tokens of up to 16 bytes (almost all) sit in an open-addressing table keyed by
/// two packed integers (loaded with two unaligned reads where the text allows), and only the few longer
/// tokens are compared byte by byte. The tables are built once per process and never freed (the tokenizers
/// are cached for the process's lifetime), so the merge loop reads them through plain pointers.
struct BPERanks: @unchecked Sendable {
    /// The rank of each token of one or two bytes (index `first << 8 | second`, or `256 * 256 + byte`), or
    /// ``none``.
    private let short: UnsafeMutablePointer<UInt32>
    /// Open addressing, linear probing, tokens of 3–16 bytes.
    private let entries: UnsafeMutablePointer<Entry>
    private let mask: Int
    /// Tokens longer than 16 bytes, by their hash.
    private let long: [UInt64: [(bytes: [UInt8], rank: UInt32)]]
    /// The length of the longest token.
    private let maxLength: Int
    private(set) var count = 0

    /// Rank of nothing: larger than every rank.
    static let none = UInt32.max

    private struct Entry {
        var low: UInt64
        var high: UInt64
        /// `rank << 5 | length`; 0 for an empty slot.
        var tag: UInt32
    }

    init(contentsOf url: URL) throws {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw SluiceError(
                .configuration,
                "cannot read the BPE rank file \(url.path) (run scripts/setup.sh to fetch it): \(error.localizedDescription)"
            )
        }
        var tokens: [([UInt8], UInt32)] = []
        tokens.reserveCapacity(210_000)
        var lineNumber = 0
        try data.withUnsafeBytes { (file: UnsafeRawBufferPointer) in
            for line in file.split(separator: UInt8(ascii: "\n")) where !line.isEmpty {
                lineNumber += 1
                guard let entry = Self.parseLine(UnsafeRawBufferPointer(rebasing: line)) else {
                    throw SluiceError(.configuration, "\(url.path): line \(lineNumber) is not 'base64 rank'")
                }
                tokens.append(entry)
            }
        }
        guard !tokens.isEmpty else { throw SluiceError(.configuration, "\(url.path) holds no ranks") }
        self.init(tokens: tokens)
    }

    /// One line of a rank file, `base64(token) rank` (standard alphabet, padded), decoded on its bytes: with
    /// `Data(base64Encoded:)` and a `String` per rank, reading cl100k_base's 100,256 lines was 4% of the CPU
    /// of a latency-bound run (issue 19), before the first document. Nil for anything else.
    static func parseLine(_ line: UnsafeRawBufferPointer) -> ([UInt8], UInt32)? {
        guard let space = line.firstIndex(of: UInt8(ascii: " ")), space > 0, space % 4 == 0, space + 1 < line.count
        else { return nil }
        var rank: UInt32 = 0
        for byte in line[(space + 1)...] {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), rank < 1 << 26 else { return nil }
            rank = rank * 10 + UInt32(byte - UInt8(ascii: "0"))
        }
        guard rank < 1 << 26 else { return nil }
        var padding = 0
        if line[space - 1] == UInt8(ascii: "=") { padding += 1 }
        if line[space - 2] == UInt8(ascii: "=") { padding += 1 }
        var token: [UInt8] = []
        token.reserveCapacity(space / 4 * 3)
        var index = 0
        while index < space {
            var quad: UInt32 = 0
            for offset in 0..<4 {
                let byte = line[index + offset]
                let value: UInt8
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = byte - UInt8(ascii: "A")
                case UInt8(ascii: "a")...UInt8(ascii: "z"): value = byte - UInt8(ascii: "a") + 26
                case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte - UInt8(ascii: "0") + 52
                case UInt8(ascii: "+"): value = 62
                case UInt8(ascii: "/"): value = 63
                case UInt8(ascii: "=") where index + offset >= space - padding: value = 0
                default: return nil
                }
                quad = quad << 6 | UInt32(value)
            }
            token.append(contentsOf: [
                UInt8(truncatingIfNeeded: quad >> 16), UInt8(truncatingIfNeeded: quad >> 8),
                UInt8(truncatingIfNeeded: quad),
            ])
            index += 4
        }
        token.removeLast(padding)
        return token.isEmpty ? nil : (token, rank)
    }

    private init(tokens: [([UInt8], UInt32)]) {
        short = .allocate(capacity: 256 * 256 + 256)
        short.initialize(repeating: Self.none, count: 256 * 256 + 256)
        let medium = tokens.count(where: { $0.0.count > 2 && $0.0.count <= 16 })
        var capacity = 1024
        while capacity < 2 * medium { capacity *= 2 }
        entries = .allocate(capacity: capacity)
        entries.initialize(repeating: Entry(low: 0, high: 0, tag: 0), count: capacity)
        mask = capacity - 1
        var long: [UInt64: [(bytes: [UInt8], rank: UInt32)]] = [:]
        var maxLength = 0
        for (bytes, rank) in tokens {
            maxLength = max(maxLength, bytes.count)
            switch bytes.count {
            case 1: short[256 * 256 + Int(bytes[0])] = rank
            case 2: short[Int(bytes[0]) << 8 | Int(bytes[1])] = rank
            case 3...16:
                let (low, high) = bytes.withUnsafeBufferPointer { Self.pack($0.baseAddress!, bytes.count, readable: 0) }
                var slot = Self.slot(low, high, bytes.count) & mask
                while entries[slot].tag != 0 { slot = (slot + 1) & mask }
                entries[slot] = Entry(low: low, high: high, tag: rank << 5 | UInt32(bytes.count))
            default:
                let hash = bytes.withUnsafeBufferPointer { Self.hash($0.baseAddress!, bytes.count) }
                long[hash, default: []].append((bytes, rank))
            }
        }
        self.long = long
        self.maxLength = maxLength
        self.count = tokens.count
    }

    /// The rank of the `length` bytes at `start`, or ``none`` when they are not a token. `readable` is how
    /// many bytes from `start` may be read (at least `length`): with 16 or more, packing is two loads.
    @inline(__always)
    func rank(_ start: UnsafePointer<UInt8>, _ length: Int, readable: Int) -> UInt32 {
        if length <= 2 {
            return length == 2 ? short[Int(start[0]) << 8 | Int(start[1])] : short[256 * 256 + Int(start[0])]
        }
        if length <= 16 {
            let (low, high) = Self.pack(start, length, readable: readable)
            let tag = UInt32(length)
            var slot = Self.slot(low, high, length) & mask
            while true {
                let entry = entries[slot]
                if entry.tag == 0 { return Self.none }
                if entry.low == low && entry.high == high && entry.tag & 31 == tag { return entry.tag >> 5 }
                slot = (slot + 1) & mask
            }
        }
        return longRank(start, length)
    }

    private func longRank(_ start: UnsafePointer<UInt8>, _ length: Int) -> UInt32 {
        guard length <= maxLength, let candidates = long[Self.hash(start, length)] else { return Self.none }
        for candidate in candidates where candidate.bytes.count == length {
            let equal = candidate.bytes.withUnsafeBufferPointer { memcmp($0.baseAddress!, start, length) == 0 }
            if equal { return candidate.rank }
        }
        return Self.none
    }

    /// The bytes as two little-endian integers, zero beyond `length` (3...16).
    @inline(__always)
    static func pack(_ start: UnsafePointer<UInt8>, _ length: Int, readable: Int) -> (UInt64, UInt64) {
        if readable >= 16 {
            let raw = UnsafeRawPointer(start)
            let first = raw.loadUnaligned(as: UInt64.self).littleEndian
            let second = raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian
            if length <= 8 {
                return (length == 8 ? first : first & ((1 &<< UInt64(8 * length)) &- 1), 0)
            }
            return (first, length == 16 ? second : second & ((1 &<< UInt64(8 * (length - 8))) &- 1))
        }
        var low: UInt64 = 0
        var high: UInt64 = 0
        for offset in 0..<min(length, 8) { low |= UInt64(start[offset]) &<< UInt64(8 * offset) }
        if length > 8 {
            for offset in 8..<length { high |= UInt64(start[offset]) &<< UInt64(8 * (offset - 8)) }
        }
        return (low, high)
    }

    @inline(__always)
    private static func slot(_ low: UInt64, _ high: UInt64, _ length: Int) -> Int {
        let mixed = (low ^ (high &* 0x9E37_79B9_7F4A_7C15) ^ UInt64(length)) &* 0xBF58_476D_1CE4_E5B9
        return Int(truncatingIfNeeded: mixed ^ (mixed >> 29))
    }

    /// FNV-1a over the bytes (long tokens only).
    private static func hash(_ start: UnsafePointer<UInt8>, _ length: Int) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for offset in 0..<length { hash = (hash ^ UInt64(start[offset])) &* 0x100_0000_01B3 }
        return hash
    }
}
