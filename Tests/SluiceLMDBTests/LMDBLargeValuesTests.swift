#if os(Linux)
import Foundation
import Glibc
import SluiceCore
import Testing

@testable import SluiceLMDB

/// A search's scan of large values copies them from the data file (``LMDBTransaction/LargeValues/copied``):
/// the same bytes as through the map, without mapping their pages.
@Suite struct LMDBLargeValuesTests {
    /// Minor page faults of the calling thread so far (the scans below run on one thread, without awaiting).
    private static func threadFaults() -> Int {
        var usage = rusage()
        getrusage(1, &usage)  // RUSAGE_THREAD (a GNU extension Swift does not import)
        return usage.ru_minflt
    }

    /// An environment holding `count` values of `bytes` bytes (each on its own pages), keyed by big-endian index.
    private static func environment(count: Int, bytes: Int) throws -> (LMDBEnvironment, LMDBDatabase, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lmdb-large-\(UInt64.random(in: 0...UInt64.max))"
        )
        let environment = try LMDBEnvironment(path: directory, mapSize: 1 << 30)
        let values = try environment.database("values")
        for start in stride(from: 0, to: count, by: 1_000) {
            try environment.write { txn in
                for index in start..<min(count, start + 1_000) {
                    try txn.put(values, key(index), value(index, bytes: bytes))
                }
            }
        }
        return (environment, values, directory)
    }

    private static func key(_ index: Int) -> [UInt8] { withUnsafeBytes(of: UInt32(index).bigEndian) { Array($0) } }

    /// The index's four bytes, then its low byte repeated (cheap to make in a debug build).
    private static func value(_ index: Int, bytes: Int) -> [UInt8] {
        key(index) + [UInt8](repeating: UInt8(truncatingIfNeeded: index &* 31), count: bytes - 4)
    }

    /// A checksum of every 512th byte of the values (index by index, weighted by the index).
    private static func checksum(_ value: UnsafeRawBufferPointer, _ index: Int) -> Int {
        stride(from: 0, to: value.count, by: 512).reduce(0) { $0 &+ Int(value[$1]) &* (index &+ 1) }
    }

    /// Visits every value, returning a checksum of the values, how many were visited and the thread's faults.
    private static func scan(
        _ environment: LMDBEnvironment,
        _ values: LMDBDatabase,
        _ largeValues: LMDBTransaction.LargeValues
    ) throws -> (sum: Int, count: Int, faults: Int) {
        try environment.read { txn in
            var sum = 0
            var count = 0
            let before = threadFaults()
            try txn.forEach(values, largeValues: largeValues) { key, value in
                let index = Int(key.loadUnaligned(as: UInt32.self).bigEndian)
                sum &+= checksum(value, index)
                count += 1
                return true
            }
            return (sum, count, threadFaults() - before)
        }
    }

    @Test("a scan copying large values reads the same bytes and maps none of their pages")
    func copiedScanMapsNoValuePage() throws {
        let count = 20_000  // 80 MB of values, 20 times the releaser's budget
        let (environment, values, directory) = try Self.environment(count: count, bytes: 4_000)
        defer { try? FileManager.default.removeItem(at: directory) }
        var expected = 0
        for index in 0..<count {
            expected &+= Self.value(index, bytes: 4_000).withUnsafeBytes { Self.checksum($0, index) }
        }

        let copied = try Self.scan(environment, values, .copied)
        #expect(copied.count == count)
        #expect(copied.sum == expected, "the copies hold the values' bytes")
        // Only the leaf and branch pages of the keys are mapped: about 90 faults for 20,000 keys (LMDB's
        // cursor alone, in C), more when a release drops them mid-scan (other tests run meanwhile). Read
        // through the map, the values fault (measured below: 1,000–1,450; a fault maps 16 pages or a large
        // folio of the page cache).
        #expect(copied.faults < 400, "a scan copying 20,000 large values faulted \(copied.faults) times")

        let mapped = try Self.scan(environment, values, .mapped)
        #expect(mapped.count == count)
        #expect(mapped.sum == expected)
        #expect(
            mapped.faults > 2 * copied.faults,
            "read through the map, the values fault (\(mapped.faults) faults, \(copied.faults) copying them)"
        )
    }

    /// Reads by key (the graph's catch-up reads each changed record so): copied, the same bytes as through the
    /// map, none of the values' pages mapped, and counted in ``LMDBEnvironment/valuesCopied``.
    @Test("reads by key copying large values read the same bytes and map none of their pages")
    func copiedGetsMapNoValuePage() throws {
        let count = 10_000  // 40 MB of values, 10 times the releaser's budget
        let (environment, values, directory) = try Self.environment(count: count, bytes: 4_000)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Every 7th index, then the next (the changed labels of a catch-up are scattered over the store).
        let order = (0..<count).map { ($0 &* 7) % count }
        func read(_ largeValues: LMDBTransaction.LargeValues) throws -> (sum: Int, faults: Int) {
            try environment.read { txn in
                var sum = 0
                let before = Self.threadFaults()
                for index in order {
                    // No expectation in the loop (recording one allocates): a missing or short value changes the sum.
                    guard let value = try txn.get(values, Self.key(index), largeValues: largeValues),
                        value.count == 4_000
                    else { continue }
                    sum &+= value.withUnsafeBytes { Self.checksum($0, index) }
                }
                return (sum, Self.threadFaults() - before)
            }
        }
        var expected = 0
        for index in 0..<count {
            expected &+= Self.value(index, bytes: 4_000).withUnsafeBytes { Self.checksum($0, index) }
        }
        // What a read leaves mapped, read from this map's resident size: the map is taken out of the shared
        // releaser's hands (which other suites running at the same time make release it at any moment) and
        // emptied before each read. Faults counted instead varied with those releases (the copies' tree pages
        // faulting again): 661 against 3,551 through the map alone, 1,711 against 3,544 in the whole suite.
        ResidentMemoryReleaser.shared.unregister(environment.mapping)
        let ranges = ResidentMemoryReleaser.mappings(of: directory.appendingPathComponent("data.mdb"))
        try #require(ranges.count == 1, "one map of the data file: \(ranges)")
        let map = ranges[0]
        func emptied() { madvise(UnsafeMutableRawPointer(bitPattern: map.start), map.length, MADV_DONTNEED) }

        let copiedBefore = environment.valuesCopied
        emptied()
        let copied = try read(.copied)
        let copiedResident = MapResidency.residentBytes(at: map.start)
        #expect(copied.sum == expected, "the copies hold the values' bytes")
        #expect(environment.valuesCopied - copiedBefore == count, "each read by key was a copy")
        emptied()
        let mapped = try read(.mapped)
        let mappedResident = MapResidency.residentBytes(at: map.start)
        #expect(mapped.sum == expected)
        #expect(environment.valuesCopied - copiedBefore == count, "reads through the map copy nothing")
        // Copied, only the keys' leaf and branch pages are faulted in — with their cached neighbours (the kernel
        // maps up to 16 pages around a fault): 5.3 MB here; through the map every value's pages too (40 MB).
        #expect(mappedResident > 30 << 20, "reading through the map left \(mappedResident) bytes resident")
        #expect(
            copiedResident * 4 < mappedResident,
            "copying left \(copiedResident) bytes of the map resident, reading through it \(mappedResident)"
        )
        // Small values and a missing key: as before.
        let small = try environment.database("small")
        try environment.write { txn in try txn.put(small, Self.key(1), [1, 2, 3]) }
        let (present, absent) = try environment.read { txn in
            (
                try txn.get(small, Self.key(1), largeValues: .copied),
                try txn.get(small, Self.key(2), largeValues: .copied)
            )
        }
        #expect(present == [1, 2, 3])
        #expect(absent == nil)
    }

    /// A write transaction's values may be its own dirty pages, not yet in the file: it reads them through the
    /// map (or its dirty copies), whatever it asks for.
    @Test("a write transaction asking for copies reads its own writes")
    func writeTransactionReadsItsOwnWrites() throws {
        let (environment, values, directory) = try Self.environment(count: 50, bytes: 3_000)
        defer { try? FileManager.default.removeItem(at: directory) }
        let seen = try environment.write { txn -> [UInt8] in
            try txn.put(values, Self.key(7), [UInt8](repeating: 0xEE, count: 3_000))
            var seen: [UInt8] = []
            try txn.forEach(values, from: Self.key(7), largeValues: .copied) { _, value in
                seen = Array(value)
                return false
            }
            return seen
        }
        #expect(seen == [UInt8](repeating: 0xEE, count: 3_000))
        let committed = try environment.read { txn -> [UInt8] in
            var seen: [UInt8] = []
            try txn.forEach(values, from: Self.key(7), largeValues: .copied) { _, value in
                seen = Array(value)
                return false
            }
            return seen
        }
        #expect(committed == [UInt8](repeating: 0xEE, count: 3_000), "a read after the commit copies the new bytes")
    }

    /// One scan over values of sizes around half a page and a page, in an order that shrinks and grows the copy
    /// buffer: each value copied holds exactly its own bytes (none of a longer one read before it).
    @Test("copies of values around half a page and a page, in mixed order, hold exactly their bytes")
    func mixedSizesCopyExactly() throws {
        let sizes = [2_047, 2_048, 2_049, 4_095, 4_096, 4_097, 8_193, 2_100, 6_000, 2_048, 4_000]
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lmdb-mixed-\(UInt64.random(in: 0...UInt64.max))"
        )
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = try LMDBEnvironment(path: directory, mapSize: 1 << 26)
        let values = try environment.database("values")
        let expected = sizes.enumerated().map { index, size in
            Self.key(index) + (0..<(size - 4)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index) }
        }
        try environment.write { txn in
            for (index, value) in expected.enumerated() { try txn.put(values, Self.key(index), value) }
        }
        for largeValues in [LMDBTransaction.LargeValues.copied, .mapped] {
            let read = try environment.read { txn -> [[UInt8]] in
                var read: [[UInt8]] = []
                try txn.forEach(values, largeValues: largeValues) { _, value in
                    read.append(Array(value))
                    return true
                }
                return read
            }
            #expect(read.map(\.count) == sizes, "\(largeValues)")
            #expect(read == expected, "\(largeValues)")
        }
    }

    /// Small values sit in the leaf pages the cursor reads anyway: they are read in place.
    @Test("small values are read in place")
    func smallValuesAreReadInPlace() throws {
        let (environment, values, directory) = try Self.environment(count: 200, bytes: 100)
        defer { try? FileManager.default.removeItem(at: directory) }
        let read = try environment.read { txn -> [[UInt8]] in
            var read: [[UInt8]] = []
            try txn.forEach(values, largeValues: .copied) { _, value in
                read.append(Array(value))
                return true
            }
            return read
        }
        #expect(read == (0..<200).map { Self.value($0, bytes: 100) })
    }
}
#endif
