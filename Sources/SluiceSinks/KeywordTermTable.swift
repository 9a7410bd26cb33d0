import Foundation

/// A set of terms as UTF-8 bytes, each given a number (0, 1, … in the order first added): an open-addressing
/// hash table over the bytes, which it keeps end to end in one array. The keyword index counts the terms of
/// every record it writes with it, and collects a segment's postings by it, without making or hashing a
/// `String` per term (which cost most of that work).
struct KeywordTermTable {
    /// Every term's bytes, end to end; the i-th term is `bytes[starts[i]..<starts[i + 1]]`.
    private(set) var bytes: [UInt8] = []
    private var starts: [Int] = [0]
    private var hashes: [UInt64] = []
    /// Term number + 1 per slot, 0 where empty; a power of two, at most half full.
    private var slots: [Int32] = Array(repeating: 0, count: 16)

    /// How many terms it holds.
    var count: Int { hashes.count }

    /// The bytes of term `number`.
    func term(_ number: Int) -> ArraySlice<UInt8> { bytes[starts[number]..<starts[number + 1]] }

    /// The number of `term`, adding it if it is new.
    mutating func insert(_ term: UnsafeBufferPointer<UInt8>) -> (number: Int, inserted: Bool) {
        let hash = Self.hash(term)
        var slot = Int(truncatingIfNeeded: hash) & (slots.count - 1)
        while slots[slot] != 0 {
            let number = Int(slots[slot]) - 1
            if hashes[number] == hash, matches(number, term) { return (number, false) }
            slot = (slot + 1) & (slots.count - 1)
        }
        let number = hashes.count
        slots[slot] = Int32(number + 1)
        hashes.append(hash)
        bytes.append(contentsOf: term)
        starts.append(bytes.count)
        if hashes.count * 2 > slots.count { grow() }
        return (number, true)
    }

    /// The number of `term`, nil if absent.
    func number(of term: UnsafeBufferPointer<UInt8>) -> Int? {
        let hash = Self.hash(term)
        var slot = Int(truncatingIfNeeded: hash) & (slots.count - 1)
        while slots[slot] != 0 {
            let number = Int(slots[slot]) - 1
            if hashes[number] == hash, matches(number, term) { return number }
            slot = (slot + 1) & (slots.count - 1)
        }
        return nil
    }

    /// The terms' numbers in the order of their bytes (`memcmp`, a term before any longer one it begins):
    /// the order a segment's keys are written in. Each term's first 8 bytes, read as a big-endian integer
    /// (zeros past its end), order most pairs without reading the terms again; pairs whose 8 bytes are equal
    /// are compared whole. The integers never order two terms against their bytes: up to the first byte where
    /// two terms differ their integers agree, and a term that ends first reads zeros there, at most the other's
    /// byte.
    func sortedNumbers() -> [Int] {
        guard count > 1 else { return Array(0..<count) }
        return bytes.withUnsafeBufferPointer { stored in
            starts.withUnsafeBufferPointer { starts in
                let base = stored.baseAddress!
                var keyed: [(prefix: UInt64, number: Int)] = []
                keyed.reserveCapacity(count)
                for number in 0..<count {
                    let start = starts[number]
                    var prefix: UInt64 = 0
                    for offset in 0..<min(8, starts[number + 1] - start) {
                        prefix |= UInt64(base[start + offset]) << (56 - 8 * offset)
                    }
                    keyed.append((prefix, number))
                }
                keyed.sort { a, b in
                    guard a.prefix == b.prefix else { return a.prefix < b.prefix }
                    let aStart = starts[a.number]
                    let bStart = starts[b.number]
                    let aCount = starts[a.number + 1] - aStart
                    let bCount = starts[b.number + 1] - bStart
                    let order = memcmp(base + aStart, base + bStart, min(aCount, bCount))
                    return order != 0 ? order < 0 : aCount < bCount
                }
                return keyed.map(\.number)
            }
        }
    }

    private func matches(_ number: Int, _ term: UnsafeBufferPointer<UInt8>) -> Bool {
        let start = starts[number]
        guard starts[number + 1] - start == term.count else { return false }
        return bytes.withUnsafeBufferPointer { stored in
            term.isEmpty || memcmpEqual(stored.baseAddress! + start, term.baseAddress!, term.count)
        }
    }

    private mutating func grow() {
        slots = Array(repeating: 0, count: slots.count * 2)
        for (number, hash) in hashes.enumerated() {
            var slot = Int(truncatingIfNeeded: hash) & (slots.count - 1)
            while slots[slot] != 0 { slot = (slot + 1) & (slots.count - 1) }
            slots[slot] = Int32(number + 1)
        }
    }

    /// FNV-1a over the bytes, then a final mix so that the low bits (the slot) depend on every byte.
    static func hash(_ term: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in term { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        hash ^= hash >> 29
        hash = hash &* 0xBF58_476D_1CE4_E5B9
        return hash ^ (hash >> 32)
    }
}

private func memcmpEqual(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ count: Int) -> Bool {
    for index in 0..<count where a[index] != b[index] { return false }
    return true
}
