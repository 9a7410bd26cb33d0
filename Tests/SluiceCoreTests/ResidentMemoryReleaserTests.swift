#if os(Linux)
import Foundation
import Glibc
import SluiceCore
import Synchronization
import Testing

@Suite struct ResidentMemoryReleaserTests {
    /// Resident kilobytes of the mappings of `path` in this process, from /proc/self/smaps.
    private static func residentKilobytes(of path: String) throws -> Int {
        let handle = try #require(FileHandle(forReadingAtPath: "/proc/self/smaps"))
        defer { try? handle.close() }
        let smaps = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        var inside = false
        var total = 0
        for line in smaps.split(separator: "\n") {
            if let first = line.first, first.isHexDigit, line.contains("-") && line.split(separator: " ").count >= 5 {
                inside = line.hasSuffix(" " + path)
            } else if inside, line.hasPrefix("Rss:") {
                total += Int(line.split(separator: " ")[1]) ?? 0
            }
        }
        return total
    }

    /// Maps a file of `pages` pages, each page's first byte set; returns the mapping (unmapped by the caller).
    private func mappedFile(pages: Int) throws -> (file: URL, base: UnsafeMutablePointer<UInt8>, size: Int) {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sluice-budget-\(UInt32.random(in: 0...UInt32.max)).bin"
        )
        .resolvingSymlinksInPath()
        let size = pages * 4096
        var bytes = [UInt8](repeating: 0, count: size)
        for i in stride(from: 0, to: size, by: 4096) { bytes[i] = UInt8(truncatingIfNeeded: i / 4096 &+ 1) }
        try Data(bytes).write(to: file)
        let fd = open(file.path, O_RDONLY)
        try #require(fd >= 0)
        defer { close(fd) }
        let map = try #require(mmap(nil, size, PROT_READ, MAP_SHARED, fd, 0))
        try #require(map != MAP_FAILED)
        return (file, map.assumingMemoryBound(to: UInt8.self), size)
    }

    @Test("past its budget of mapped pages, a check releases them; under it, it leaves them")
    func releasesPastTheBudget() throws {
        let (file, base, size) = try mappedFile(pages: 4096)  // 16 MB
        defer {
            munmap(base, size)
            try? FileManager.default.removeItem(at: file)
        }
        // The timer is out of the way (an hour); only the budget checks release. The budget is held against
        // this mapping's own resident pages (smaps), not the whole process's, which other tests change.
        let path = file.path
        let releaser = ResidentMemoryReleaser(interval: 3600, budgetBytes: 8 << 20) {
            (try? Self.residentKilobytes(of: path)).map { $0 / 4 }
        }
        let token = releaser.register(ResidentMemoryReleaser.mappings(of: file))
        defer { releaser.unregister(token) }
        releaser.releaseIfOverBudget()  // the first check sets the floor
        var sum = 0
        for i in stride(from: 0, to: 64 * 4096, by: 4096) { sum &+= Int(base[i]) }  // 256 KB, under budget
        releaser.releaseIfOverBudget()
        #expect(try Self.residentKilobytes(of: file.path) >= 200, "under the budget the pages stay mapped")

        for i in stride(from: 0, to: size, by: 4096) { sum &+= Int(base[i]) }  // 16 MB, over budget
        #expect(try Self.residentKilobytes(of: file.path) >= 15 * 1024)
        releaser.releaseIfOverBudget()
        #expect(try Self.residentKilobytes(of: file.path) < 512, "over the budget the pages are released")
        #expect(sum > 0)
    }

    /// Resident pages as a test sets them.
    private final class Pages: Sendable {
        let value = Mutex(0)
    }

    /// A releaser of `budget` pages reading `pages`, after its first check: it released once, at `level`.
    private static func releaserAtTheLevel(_ level: Int, budget: Int, _ pages: Pages) -> ResidentMemoryReleaser {
        let releaser = ResidentMemoryReleaser(interval: 3600, budgetBytes: budget * Int(sysconf(Int32(_SC_PAGESIZE)))) {
            pages.value.withLock { $0 }
        }
        pages.value.withLock { $0 = level }
        releaser.releaseIfOverBudget()  // the first check releases and sets the level
        #expect(releaser.releases == 1)
        return releaser
    }

    /// The budget is growth since the last release; when other mappings' pages leave the resident set in the
    /// meantime (an environment closed, pages reclaimed), the growth counts from that lower level, so that
    /// what they freed does not widen the budget of the mappings still growing.
    @Test("growth counts from the lowest level since the last release")
    func budgetCountsFromTheLowestLevel() {
        let (pages, budget) = (Pages(), 100)
        let releaser = Self.releaserAtTheLevel(1_000, budget: budget, pages)
        pages.value.withLock { $0 = 1_000 + budget }
        releaser.releaseIfOverBudget()
        #expect(releaser.releases == 1, "at the budget, nothing is released")
        pages.value.withLock { $0 = 500 }  // another mapping's pages went away
        releaser.releaseIfOverBudget()
        #expect(releaser.releases == 1)
        pages.value.withLock { $0 = 500 + budget + 1 }
        releaser.releaseIfOverBudget()
        #expect(releaser.releases == 2, "past the budget from the lower level, the pages are released")
    }

    /// A search runs its transactions inside ``ResidentMemoryReleaser/deferringReleases(_:)``: their checks do
    /// not release while the growth is under twice the budget (the release comes after the answer), and do
    /// past it (one long transaction cannot map the whole store).
    @Test("inside deferringReleases, a release waits for the work's end up to twice the budget")
    func deferredReleasesUpToTwiceTheBudget() {
        let (pages, budget) = (Pages(), 100)
        let releaser = Self.releaserAtTheLevel(1_000, budget: budget, pages)
        #expect(!ResidentMemoryReleaser.isDeferring)
        var policy = ReleaseCheckPolicy(targetPages: releaser.checkTargetPages, interval: 1)
        releaser.deferringReleases {
            #expect(ResidentMemoryReleaser.isDeferring)
            pages.value.withLock { $0 = 1_000 + budget + 50 }  // past the budget, under twice it
            releaser.releaseIfOverBudget()  // a transaction's end: checked after the work instead
            releaser.releaseIfOverBudget(adapting: &policy)  // within a transaction
            #expect(releaser.releases == 1, "under twice the budget, the release waits for the work's end")
            releaser.deferringReleases {  // nested: still deferring, and still after it
                releaser.releaseIfOverBudget(adapting: &policy)
            }
            #expect(ResidentMemoryReleaser.isDeferring)
            #expect(releaser.releases == 1)
            pages.value.withLock { $0 = 1_000 + 2 * budget + 1 }
            releaser.releaseIfOverBudget(adapting: &policy)
            #expect(releaser.releases == 2, "past twice the budget, a check releases at once")
            pages.value.withLock { $0 = 1_000 + 2 * budget + 1 + budget + 1 }
        }
        #expect(!ResidentMemoryReleaser.isDeferring)
        #expect(releaser.releases == 2)
        releaser.releaseIfOverBudget()  // what the reader thread does once the caller has its answer
        #expect(releaser.releases == 3, "after the work, the budget is held as before")
    }

    /// Searches have a budget of their own (``ResidentMemoryReleaser/shared``: 16 MB against a load's 4): what a
    /// search maps is released after its answer only past it (``ResidentMemoryReleaser/releaseAfterSearch()``),
    /// and at once inside it only past twice it; a load's checks keep the smaller budget.
    @Test("a search's release waits for its own budget; a load's check keeps the load's")
    func searchesHaveTheirOwnBudget() {
        let (pages, budget, searchBudget) = (Pages(), 100, 400)
        let releaser = ResidentMemoryReleaser(
            interval: 3600,
            budgetBytes: budget * Int(sysconf(Int32(_SC_PAGESIZE))),
            searchBudgetBytes: searchBudget * Int(sysconf(Int32(_SC_PAGESIZE)))
        ) { pages.value.withLock { $0 } }
        pages.value.withLock { $0 = 1_000 }
        releaser.releaseIfOverBudget()  // the first check releases and sets the level
        #expect(releaser.releases == 1)
        var policy = ReleaseCheckPolicy(targetPages: releaser.checkTargetPages, interval: 1)
        releaser.deferringReleases {
            pages.value.withLock { $0 = 1_000 + 2 * searchBudget }  // at twice the search budget
            releaser.releaseIfOverBudget(adapting: &policy)
            #expect(releaser.releases == 1, "inside a search, nothing is released up to twice its budget")
        }
        releaser.releaseAfterSearch()
        #expect(releaser.releases == 2, "after the answer, past the search budget: released")
        var level = 1_000 + 2 * searchBudget  // where that release left the level
        pages.value.withLock { $0 = level + searchBudget }
        releaser.releaseAfterSearch()
        #expect(releaser.releases == 2, "after the answer, up to the search budget: kept")
        releaser.deferringReleases {
            pages.value.withLock { $0 = level + 2 * searchBudget + 1 }
            releaser.releaseIfOverBudget(adapting: &policy)
            #expect(releaser.releases == 3, "past twice the search budget, a check inside a search releases at once")
        }
        level += 2 * searchBudget + 1
        pages.value.withLock { $0 = level + budget + 1 }
        releaser.releaseAfterSearch()
        #expect(releaser.releases == 3, "a search's growth under its budget is kept")
        releaser.releaseIfOverBudget()  // a load's transaction
        #expect(releaser.releases == 4, "a load's check releases past the load's budget")
    }

    @Test("a registered file mapping leaves the resident set on release, and reads the same bytes after")
    func releasesMappedPages() throws {
        let (file, base, size) = try mappedFile(pages: 2048)  // 8 MB
        defer {
            munmap(base, size)
            try? FileManager.default.removeItem(at: file)
        }

        var sum = 0
        for i in stride(from: 0, to: size, by: 4096) { sum &+= Int(base[i]) }
        let touched = try Self.residentKilobytes(of: file.path)
        #expect(touched >= 8 * 1024 - 64, "touching every page makes the mapping resident: \(touched) kB")

        let releaser = ResidentMemoryReleaser.shared
        let token = releaser.register(ResidentMemoryReleaser.mappings(of: file))
        #expect(token != nil, "the mapping is found in /proc/self/maps")
        releaser.releaseAll()
        #expect(try Self.residentKilobytes(of: file.path) < 512, "released pages leave the resident set")

        var again = 0
        for i in stride(from: 0, to: size, by: 4096) { again &+= Int(base[i]) }
        #expect(again == sum, "the data is read back unchanged")
        releaser.unregister(token)
    }
}
#endif
