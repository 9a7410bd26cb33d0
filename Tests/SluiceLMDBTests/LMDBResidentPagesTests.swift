#if os(Linux)
import Foundation
import Glibc
import SluiceCore
import Testing

@testable import SluiceLMDB
@testable import SluiceState

@Suite struct LMDBResidentPagesTests {
    /// Resident kilobytes of the mappings of `path` in this process, from /proc/self/smaps.
    private func residentKilobytes(of path: String) -> Int {
        guard let handle = FileHandle(forReadingAtPath: "/proc/self/smaps") else { return -1 }
        defer { try? handle.close() }
        var inside = false
        var total = 0
        for line in String(decoding: handle.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n") {
            if let first = line.first, first.isHexDigit, line.contains("-") && line.split(separator: " ").count >= 5 {
                inside = line.hasSuffix(" " + path)
            } else if inside, line.hasPrefix("Rss:") {
                total += Int(line.split(separator: " ")[1]) ?? 0
            }
        }
        return total
    }

    /// Two environments open on one file each map it; when the first closes, its old address range may be
    /// handed to anything else (heap blocks are mapped too). Releasing must never touch that range: here an
    /// anonymous page placed there keeps its bytes through a release.
    @Test func aClosedEnvironmentsOldRangeIsNeverReleased() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lmdb-ranges-\(UInt64.random(in: 0...UInt64.max))"
        )
        .resolvingSymlinksInPath()
        defer { try? FileManager.default.removeItem(at: directory) }
        let dataFile = directory.appendingPathComponent("data.mdb")
        var first: LMDBEnvironment? = try LMDBEnvironment(path: directory, mapSize: 1 << 20)
        let firstRange = try #require(ResidentMemoryReleaser.mappings(of: dataFile).first)
        let second = try LMDBEnvironment(path: directory, mapSize: 1 << 20)
        #expect(ResidentMemoryReleaser.mappings(of: dataFile).count == 2)
        first = nil
        #expect(first == nil)

        #expect(
            !ResidentMemoryReleaser.shared.isRegistered(firstRange.start),
            "the closed environment's range is still registered"
        )
        #expect(
            ResidentMemoryReleaser.mappings(of: dataFile).allSatisfy {
                ResidentMemoryReleaser.shared.isRegistered($0.start)
            }
        )

        // And what that would do: a page placed at the old address keeps its bytes through a release. (If
        // another test's allocation took the address first, only the check above applies.)
        let address = try #require(UnsafeMutableRawPointer(bitPattern: firstRange.start))
        let page = mmap(address, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0)
        if page == address {
            defer { munmap(page, 4096) }
            page!.storeBytes(of: 0xAB, as: UInt8.self)
            ResidentMemoryReleaser.shared.releaseAll()
            #expect(
                page!.load(as: UInt8.self) == 0xAB,
                "a release zeroed memory that is no longer the environment's map"
            )
        }
        _ = try second.database("still-open")
    }

    /// One transaction that reads a whole 90 MB cache (a document of thousands of chunks looked up at
    /// once does the same) keeps the map's resident pages near the releaser's 16 MB budget: the
    /// transaction checks it every 64 operations, not only when it ends. (The budget counts the process's
    /// file pages: other tests' mappings, up to 16 MB at once, are allowed for in the bound.)
    @Test func aLargeReadTransactionStaysWithinTheBudget() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lmdb-resident-\(UInt64.random(in: 0...UInt64.max))"
        )
        .resolvingSymlinksInPath()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try CheckpointStore(directory: directory)
        let embedder = EmbedderIdentity(provider: "test", model: "m", dimensions: 384)
        let hashes = (0..<60_000).map { ContentHash(utf8: "chunk \($0)") }
        for start in stride(from: 0, to: hashes.count, by: 5_000) {
            try store.cacheEmbeddings(
                hashes[start..<(start + 5_000)].map { ($0, [Float](repeating: 0.5, count: 384)) },
                embedder: embedder
            )
        }
        let cache = try store.environment.database("embeddings")
        let path = directory.appendingPathComponent("data.mdb").path
        var peak = 0
        var found = 0
        try store.environment.read { txn in
            for (index, hash) in hashes.enumerated() {
                if try txn.get(cache, CheckpointStore.cacheKey(embedder: embedder, chunk: hash)) != nil { found += 1 }
                if index % 1_000 == 0 { peak = max(peak, residentKilobytes(of: path)) }
            }
        }
        #expect(found == hashes.count)
        #expect(peak > 0)
        #expect(peak < 48 * 1024, "resident map pages peaked at \(peak / 1024) MB during a 90 MB read")
    }
}
#endif
