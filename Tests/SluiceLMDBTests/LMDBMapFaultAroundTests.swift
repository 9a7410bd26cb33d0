#if os(Linux)
import Foundation
import Glibc
import SluiceCore
import Testing

@testable import SluiceLMDB

/// Point reads fault one page at a time in LMDB's maps, scans keep the kernel's fault-around, and read-only opens
/// get the same (``LMDBMapFaultAround``). Where the kernel or a seccomp profile refuses userfaultfd, the map keeps
/// the kernel's behaviour and the tests check that and the reads' bytes only.
@Suite struct LMDBMapFaultAroundTests {
    private static func key(_ index: Int) -> [UInt8] { withUnsafeBytes(of: UInt32(index).bigEndian) { Array($0) } }

    /// 600 bytes: six values a leaf page, so that 40,000 of them fill ~6,700 leaf pages (26 MB).
    private static func value(_ index: Int) -> [UInt8] {
        key(index) + [UInt8](repeating: UInt8(truncatingIfNeeded: index &* 31), count: 596)
    }

    private static let count = 40_000

    /// A store of ``count`` values in `directory`, written and closed.
    private static func makeStore() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lmdb-fault-around-\(UInt64.random(in: 0...UInt64.max))"
        )
        .resolvingSymlinksInPath()
        let environment = try LMDBEnvironment(path: directory, mapSize: 1 << 30)
        let values = try environment.database("values")
        for start in stride(from: 0, to: count, by: 5_000) {
            try environment.write { txn in
                for index in start..<(start + 5_000) { try txn.put(values, key(index), value(index)) }
            }
        }
        return directory
    }

    /// Reads 300 scattered keys, checking each value's bytes; returns the map's resident bytes after (the map
    /// released first, and taken out of the releaser's hands by the caller).
    private static func scatteredReads(
        _ environment: LMDBEnvironment,
        map: (start: UInt, length: Int)
    ) throws -> (resident: Int, wrong: Int) {
        madvise(UnsafeMutableRawPointer(bitPattern: map.start), map.length, MADV_DONTNEED)
        let values = try environment.database("values")
        let wrong = try environment.read { txn in
            var wrong = 0
            for step in 0..<300 {
                let index = (step &* 7_919) % count
                if try txn.get(values, key(index)) != value(index) { wrong += 1 }
            }
            return wrong
        }
        return (MapResidency.residentBytes(at: map.start), wrong)
    }

    /// With fault-around off, 300 scattered reads map about their own pages (~300 leaves and the branches
    /// above them, ~1.3 MB); with the kernel's fault-around (here while a scan runs) each fault maps up to 16
    /// cached pages — several times that.
    private static func checkPointReads(_ environment: LMDBEnvironment, dataFile: URL) throws {
        let map = try #require(ResidentMemoryReleaser.mappings(of: dataFile).first)
        ResidentMemoryReleaser.shared.unregister(environment.mapping)  // only this test releases the map now

        let pointReads = try scatteredReads(environment, map: map)
        #expect(pointReads.wrong == 0)
        guard let faultAround = environment.faultAround else {
            #expect(!environment.faultAroundOff)
            return
        }
        #expect(environment.faultAroundOff)
        faultAround.beginScan()
        #expect(!environment.faultAroundOff, "a scan gives the map back its fault-around")
        let kernels = try scatteredReads(environment, map: map)
        faultAround.endScan()
        #expect(environment.faultAroundOff, "the last scan to end turns it off again")
        #expect(kernels.wrong == 0)
        #expect(
            pointReads.resident < 2 << 20 && kernels.resident > 3 * pointReads.resident,
            "300 reads mapped \(pointReads.resident >> 10) KB with fault-around off, \(kernels.resident >> 10) KB with it"
        )
    }

    @Test("point reads map one page a fault in a read-write open")
    func pointReadsInAReadWriteOpen() throws {
        let directory = try Self.makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = try LMDBEnvironment(path: directory, mapSize: 1 << 30)
        #expect(environment.faultAroundOff == LMDBMapFaultAround.available)
        // What `sluice status` and `/ready` report: no reason when it is off, else why.
        #expect((environment.faultAroundKept == nil) == LMDBMapFaultAround.available)
        if LMDBMapFaultAround.keptByEnvironment {
            #expect(environment.faultAroundKept == "SLUICE_LMDB_FAULT_AROUND=kernel is set")
        }
        try Self.checkPointReads(environment, dataFile: directory.appendingPathComponent("data.mdb"))
    }

    /// A read-only open (`serve`, `search`, `ask`) maps the file from a read-only descriptor, which cannot be
    /// registered: its map is made again from a read-write one. It reads the same bytes, and sees what a writer
    /// commits afterwards.
    @Test("a read-only open's map is made again and reads the same bytes and later commits")
    func readOnlyOpen() throws {
        let directory = try Self.makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let reader = try LMDBEnvironment(path: directory, mapSize: 1 << 30, readOnly: true)
        #expect(reader.faultAroundOff == LMDBMapFaultAround.available)
        #expect((reader.faultAroundKept == nil) == LMDBMapFaultAround.available)
        try Self.checkPointReads(reader, dataFile: directory.appendingPathComponent("data.mdb"))

        let writer = try LMDBEnvironment(path: directory, mapSize: 1 << 30)
        let written = try writer.database("values")
        try writer.write { txn in try txn.put(written, Self.key(Self.count), Self.value(Self.count)) }
        let values = try reader.database("values")
        #expect(try reader.read { try $0.get(values, Self.key(Self.count)) } == Self.value(Self.count))
        #expect(try reader.read { try $0.count(values) } == Self.count + 1)
    }

    /// A cursor that walks past ``LMDBTransaction/scanEntries`` entries turns fault-around back on until it ends;
    /// a short one does not; scans inside scans turn it off only when the outermost ends.
    @Test("a scan keeps the kernel's fault-around while it runs, a short walk does not switch it")
    func scansKeepFaultAround() throws {
        let directory = try Self.makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = try LMDBEnvironment(path: directory, mapSize: 1 << 30)
        let values = try environment.database("values")
        guard let faultAround = environment.faultAround else {
            #expect(!LMDBMapFaultAround.available)
            return
        }
        let before = faultAround.scansUnregistered

        var offDuringShortWalk: [Bool] = []
        try environment.read { txn in
            try txn.forEach(values) { _, _ in
                offDuringShortWalk.append(environment.faultAroundOff)
                return offDuringShortWalk.count < LMDBTransaction.scanEntries
            }
        }
        #expect(offDuringShortWalk.count == LMDBTransaction.scanEntries && offDuringShortWalk.allSatisfy { $0 })
        #expect(faultAround.scansUnregistered == before)

        var visited = 0
        var offInScan: [Bool] = []
        var sum = 0
        try environment.read { txn in
            try txn.forEach(values) { _, value in
                visited += 1
                sum &+= Int(value[value.count - 1])
                if visited == 1_000 {
                    offInScan.append(environment.faultAroundOff)
                    // A second scan inside (another transaction, as a search beside a filtered search).
                    try environment.read { inner in
                        var innerVisited = 0
                        try inner.forEach(values) { _, _ in
                            innerVisited += 1
                            return innerVisited < 2_000
                        }
                    }
                    offInScan.append(environment.faultAroundOff)
                }
                return true
            }
        }
        #expect(visited == Self.count)
        #expect(sum == (0..<Self.count).reduce(0) { $0 &+ Int(UInt8(truncatingIfNeeded: $1 &* 31)) })
        #expect(offInScan == [false, false], "fault-around stays on while the outer scan runs")
        #expect(environment.faultAroundOff, "and off after it")
        #expect(faultAround.scansUnregistered == before + 1)
    }

    /// A value of four pages or more, read through the map, would fault page by page with fault-around off: a read
    /// transaction copies it from the file instead, the same bytes; a smaller one is read through the map.
    @Test("a value of several pages is copied from the file while the map faults one page at a time")
    func multiPageValuesAreCopied() throws {
        let directory = try Self.makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = try LMDBEnvironment(path: directory, mapSize: 1 << 30)
        let blobs = try environment.database("blobs")
        let large = (0..<(64 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        let small = [UInt8](repeating: 7, count: 8 << 10)
        try environment.write { txn in
            try txn.put(blobs, [1], large)
            try txn.put(blobs, [2], small)
        }
        let copiedBefore = environment.valuesCopied
        #expect(try environment.read { try $0.get(blobs, [1]) } == large)
        var visited: [[UInt8]] = []
        try environment.read { txn in
            try txn.forEach(blobs) { _, value in
                visited.append(Array(value))
                return true
            }
        }
        #expect(visited == [large, small])
        #expect(try environment.read { try $0.get(blobs, [2]) } == small)
        let copied = environment.valuesCopied - copiedBefore
        #expect(copied == (environment.faultAroundOff ? 2 : 0), "the 64 KB value read twice, the 8 KB one mapped")
    }
}
#endif
