import Foundation
import Synchronization

#if canImport(Glibc)
import CMalloc
import Glibc
#endif

/// Keeps the process's resident memory to what it uses, so that peak RSS stays flat however large the
/// corpus and the stores grow (Linux; elsewhere nothing runs):
/// - the pages of registered file mappings (LMDB's maps) are dropped from the resident set whenever the
///   process's file-backed resident memory has grown by more than a budget since the last release
///   (``releaseIfOverBudget()``, which LMDB transactions call every 64 operations and when they end),
///   and ten times a second by a background thread;
/// - the thread returns the heap's free memory to the kernel (`malloc_trim`) twice a second, and at once
///   when 4 MB more than after the last trim lie free in glibc's arenas (checked ten times a second). The `sluice`
///   command also calls ``useFixedMmapThreshold()`` at start, so that blocks of 128 KB and more are mapped
///   on their own and go back when freed; a library never changes its host's allocator settings itself.
///
/// **Heap.** glibc keeps freed memory in its arenas (one per thread that allocated). A run frees and
/// reallocates the in-flight documents' bytes, texts and vectors all the time, in sizes that vary, so
/// the free-but-kept part grows over a long run: measured on the 10× benchmark corpus, 90–120 MB free in
/// arenas next to 20–70 MB in use. glibc's dynamic mmap threshold made it worse: once a large block is
/// freed, blocks up to that size come from the arenas, so one document of 14,000 chunks leaves megabytes
/// of holes. A fixed threshold and `malloc_trim(0)` keep the resident heap near what is in use.
///
/// **LMDB maps.** Without a write map, LMDB maps its data file read-only and writes with `pwrite`. Every
/// page a transaction reads — B-tree descents for each put and get, the values read — stays mapped in
/// the process, and the kernel maps up to 15 cached neighbours with each faulted page (fault-around), so
/// resident memory grows with the store (3.9 GB after loading a 2 GB local store and cache), though
/// almost none of it is needed again soon. `MADV_DONTNEED` on a shared file mapping only unmaps:
/// the data stays in the kernel's page cache and a later access faults the page back in from there (a
/// minor fault, no I/O). That is safe while readers hold pointers into the map: they fault on their next
/// access and read the same bytes.
///
/// **Why a budget and not only a timer.** A timer bounds how long pages stay mapped, not how many get
/// mapped meanwhile. When the embed stage admits a backlog of documents at once, its embedding-cache
/// lookups fault about 13,000 random leaf pages in 100 ms on the 10× benchmark corpus, each mapping 64 KB
/// with its neighbours: 500–800 MB between two ticks, which is what the peak RSS caught. Most of it came
/// from single transactions: one document of 14,204 chunks looks all of them up in one read transaction.
/// Checking the file-backed resident size every few operations of a transaction and when it ends (one
/// `pread` of `/proc/self/statm`, about 1–2 µs) and releasing past the budget bounds it whatever the timing.
/// How many operations a transaction runs between two checks follows how fast the pages grow while it runs
/// (``ReleaseCheckPolicy``: every 64 operations while they barely fault, down to every one while each faults
/// whole neighbourhoods). A search runs inside ``deferringReleases(_:)``: its release waits until its caller has
/// the answer (the reader thread releases then, ``releaseAfterSearch()``), unless the growth passes twice the
/// search budget meanwhile.
///
/// **Searches have a larger budget** (16 MB against a load's 4). A graph search reads about 40 random pages (its
/// candidates' label → id entries and records), and each fault maps its cached neighbours too: ~4 MB a search at
/// 100,000 vectors, so at 4 MB nearly every search released the whole map and the next faulted every page back,
/// the B-trees' branch pages included. At 16 MB, searches one at a time took 0.05–0.1 ms less at p50 and
/// 8–24% more queries a second went through eight at once, p99 unchanged (docs/LOCAL_INDEX.md, "What a search
/// maps"); a searching process keeps up to 12 MB more of the map resident between releases, and one long search
/// (a filtered or keyword scan) maps up to 32 MB before it releases, where it was 8. A load's transactions keep 4 MB.
///
/// Ranges are registered and unregistered under the same lock the thread holds while it calls
/// `madvise`, so a range is never advised after its environment unmapped it (the address could by then
/// belong to another mapping, whose anonymous pages `MADV_DONTNEED` would zero).
package final class ResidentMemoryReleaser: Sendable {
    /// A budget of 4 MB: 16 MB let 5–8 MB more of the map stay resident at the peak for 3–8% fewer minor
    /// faults (docs/BENCHMARKS.md, "Flat memory with the default index").
    package static let shared = ResidentMemoryReleaser(interval: 0.1, budgetBytes: 4 << 20, searchBudgetBytes: 16 << 20)

    /// Seconds between two releases.
    private let interval: TimeInterval
    /// Heap trims happen every this many intervals.
    private let trimEvery = 5
    /// Allocations from this size up are mapped on their own (glibc's `M_MMAP_THRESHOLD`).
    static let mmapThreshold: Int32 = 128 << 10
    private let state = Mutex<(ranges: [Int: [(start: UInt, length: Int)]], next: Int, started: Bool)>(([:], 0, false))

    /// File-backed resident bytes allowed above the level right after the last release.
    private let budgetPages: Int
    /// The same for a search's release after its answer (``releaseAfterSearch()``); inside a search, twice it.
    private let searchBudgetPages: Int
    /// Bytes in a page.
    private let pageSize: Int
    /// File-backed resident pages right after the last release (-1: not measured yet).
    private let floorPages = Atomic<Int>(-1)
    /// Releases so far (for tests).
    private let releaseCount = Atomic<Int>(0)
    package var releases: Int { releaseCount.load(ordering: .relaxed) }
    /// `/proc/self/statm`, kept open: re-read with `pread` at offset 0.
    private let statm: Int32
    /// The growth of file-backed resident pages a transaction lets pass between two of its checks
    /// (``ReleaseCheckPolicy``): a quarter of the budget.
    package var checkTargetPages: Int { max(1, budgetPages / 4) }

    /// What the budget is checked against, when not `/proc/self/statm` (tests measure their own mapping).
    private let measure: (@Sendable () -> Int?)?

    /// - Parameter residentPages: the resident pages to hold to the budget; nil: the process's file-backed
    ///   pages.
    /// - Parameter searchBudgetBytes: a search's budget (``releaseAfterSearch()``); `budgetBytes` when nil.
    package init(
        interval: TimeInterval,
        budgetBytes: Int,
        searchBudgetBytes: Int? = nil,
        residentPages: (@Sendable () -> Int?)? = nil
    ) {
        self.measure = residentPages
        self.interval = interval
        self.pageSize = Int(max(1, sysconf(Int32(_SC_PAGESIZE))))
        self.budgetPages = budgetBytes / pageSize
        self.searchBudgetPages = max(budgetBytes, searchBudgetBytes ?? budgetBytes) / pageSize
        #if os(Linux)
        self.statm = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)
        #else
        self.statm = -1
        #endif
    }

    /// Releases the registered mappings now if the process's file-backed resident memory grew by more
    /// than the budget since the last release. Cheap enough to call after every transaction. Inside
    /// ``deferringReleases(_:)`` it does nothing: the check comes after the work.
    package func releaseIfOverBudget() {
        #if os(Linux)
        if Self.isDeferring { return }
        guard let shared = sharedResidentPages() else { return }
        releaseIfOverBudget(shared)
        #endif
    }

    /// Runs `body` (work a caller waits for: a search) with the releases its transactions' checks call for
    /// deferred, up to twice the search budget: past that, a check releases at once, so that one long
    /// transaction cannot map the whole store. The caller of `body` calls ``releaseAfterSearch()`` once its
    /// answer is given (``BlockingExecutor/run(afterwards:_:)``), so the `madvise` over the maps (and its TLB
    /// shootdown) is not in that answer's latency, and resident memory stays within twice the search budget
    /// however large the store. On the calling thread only; nested calls are fine.
    package func deferringReleases<T>(_ body: () throws -> T) rethrows -> T {
        #if os(Linux)
        guard !Self.isDeferring else { return try body() }
        pthread_setspecific(Self.deferringKey, UnsafeRawPointer(bitPattern: 1))
        defer { pthread_setspecific(Self.deferringKey, nil) }
        #endif
        return try body()
    }

    /// Whether the calling thread is inside ``deferringReleases(_:)``.
    package static var isDeferring: Bool {
        #if os(Linux)
        pthread_getspecific(deferringKey) != nil
        #else
        false
        #endif
    }

    #if os(Linux)
    private static let deferringKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()
    #endif

    /// ``releaseIfOverBudget()`` for a transaction that adapts how often it checks: `policy` learns the growth
    /// since its previous check (or since the release that came after it) and sets the next interval.
    package func releaseIfOverBudget(adapting policy: inout ReleaseCheckPolicy) {
        #if os(Linux)
        guard let shared = sharedResidentPages() else { return }
        let released = releaseCount.load(ordering: .relaxed)
        if released != policy.releasesSeen {
            policy.released(residentPages: floorPages.load(ordering: .relaxed), releases: released)
        }
        _ = policy.checked(residentPages: shared)
        releaseIfOverBudget(shared)
        #endif
    }

    /// The file-backed resident pages now, and the releases so far: where a transaction's policy starts.
    package func startingPoint() -> (pages: Int, releases: Int)? {
        sharedResidentPages().map { ($0, releaseCount.load(ordering: .relaxed)) }
    }

    /// What a search's reader does once its caller has the answer: releases the registered mappings' pages when
    /// they have grown past the search budget since the last release.
    package func releaseAfterSearch() {
        #if os(Linux)
        if Self.isDeferring { return }
        guard let shared = sharedResidentPages() else { return }
        releaseIfOverBudget(shared, slack: searchBudgetPages - budgetPages)
        #endif
    }

    private func releaseIfOverBudget(_ shared: Int, slack: Int = 0) {
        #if os(Linux)
        guard overBudget(shared) else { return }
        // Deferred to the end of the work (``deferringReleases(_:)``) while under twice the search budget.
        let limit = Self.isDeferring ? 2 * searchBudgetPages - budgetPages : slack
        guard limit == 0 || overBudget(shared, by: limit) else { return }
        state.withLock { state in
            // Another thread may have released while this one waited for the lock.
            if let now = sharedResidentPages(), overBudget(now, by: limit) { release(state.ranges) }
        }
        #endif
    }

    /// Resident pages backed by files or shared memory (the third field of `/proc/self/statm`).
    private func sharedResidentPages() -> Int? {
        if let measure { return measure() }
        return statmFields()?.shared
    }

    /// Anonymous resident bytes (resident less shared, from `/proc/self/statm`): what the heap trim watches.
    private func anonymousResidentBytes() -> Int? {
        statmFields().map { max(0, $0.resident - $0.shared) * pageSize }
    }

    /// The resident and shared pages (second and third fields of `/proc/self/statm`), one `pread`.
    private func statmFields() -> (resident: Int, shared: Int)? {
        #if os(Linux)
        guard statm >= 0 else { return nil }
        var buffer = (Int64(0), Int64(0), Int64(0), Int64(0), Int64(0), Int64(0), Int64(0), Int64(0))  // 64 bytes
        return withUnsafeMutableBytes(of: &buffer) { raw -> (resident: Int, shared: Int)? in
            let count = pread(statm, raw.baseAddress, raw.count, 0)
            guard count > 0 else { return nil }
            var field = 0
            var value = 0
            var resident = 0
            for byte in raw.prefix(count) {
                if byte == UInt8(ascii: " ") {
                    if field == 1 { resident = value }
                    if field == 2 { return (resident, value) }
                    field += 1
                    value = 0
                } else if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                    value = value * 10 + Int(byte - UInt8(ascii: "0"))
                }
            }
            return field == 2 ? (resident, value) : nil
        }
        #else
        return nil
        #endif
    }

    /// Sets glibc's mmap threshold to a fixed 128 KB (process-wide: for programs, not libraries, to call).
    /// A fixed threshold also turns off glibc's dynamic one, which rises to the size of each large block
    /// freed (up to 32 MB): a big document's buffers would then come from the arenas and leave them
    /// fragmented. Below it, the arenas; above it, mmap, returned to the kernel on free.
    package static func useFixedMmapThreshold() {
        #if os(Linux)
        _ = mallopt(M_MMAP_THRESHOLD, mmapThreshold)
        #endif
    }

    /// glibc's arenas a loading process keeps (`M_ARENA_MAX`): one, the main heap.
    static let loadArenas: Int32 = 1

    /// Makes every thread allocate from glibc's main heap (`M_ARENA_MAX` 1; process-wide: for programs, not
    /// libraries, to call, before their threads start). By default glibc gives threads up to eight arenas a
    /// core (16 here, for a load's 18 threads), each keeping its own free chunks between live ones, which
    /// `malloc_trim` cannot return: at the 10× load's peak, 5–19 MB of freed heap stayed resident over them,
    /// against 0–5 MB at 1× (docs/BENCHMARKS.md, "The 10× peak, run to run"). With one arena the load's
    /// threads reuse each other's freed chunks; glibc's per-thread caches still serve small blocks without the
    /// lock. `sluice` calls it for every command but `serve`; `sluice-serve` does not call it either (their
    /// concurrent searches were not measured with one arena).
    package static func useOneArena() {
        #if os(Linux)
        _ = mallopt(M_ARENA_MAX, loadArenas)
        #endif
    }

    /// Whether an address lies in a registered range (for tests).
    package func isRegistered(_ address: UInt) -> Bool {
        state.withLock { state in
            state.ranges.values.contains { $0.contains { address >= $0.start && address < $0.start + UInt($0.length) } }
        }
    }

    /// Starts the thread (trimming the heap) if it is not running yet; idempotent.
    package func start() {
        _ = register([])
    }

    /// Starts releasing the pages of these address ranges; returns a token for ``unregister(_:)``.
    package func register(_ ranges: [(start: UInt, length: Int)]) -> Int? {
        #if os(Linux)
        let (token, start) = state.withLock { state -> (Int?, Bool) in
            defer { state.started = true }
            guard !ranges.isEmpty else { return (nil, !state.started) }
            state.next += 1
            state.ranges[state.next] = ranges
            return (state.next, !state.started)
        }
        if start {
            let thread = Thread { [self] in loop() }
            thread.name = "sl-unmap"
            thread.start()
        }
        return token
        #else
        return nil
        #endif
    }

    /// Stops releasing a registration's ranges; returns only once no `madvise` on them is in progress.
    package func unregister(_ token: Int?) {
        guard let token else { return }
        _ = state.withLock { $0.ranges.removeValue(forKey: token) }
    }

    /// Drops the pages of every registered range now.
    package func releaseAll() {
        #if os(Linux)
        state.withLock { state in release(state.ranges) }
        #endif
    }

    /// Whether file-backed resident memory is over the budget (or was never measured). Growth counts from
    /// the lowest level seen since the last release: when pages leave the resident set meanwhile (another
    /// environment closed, libraries' pages reclaimed), the level follows them down, so that what they
    /// freed does not widen the budget of the mappings still growing.
    /// `slack`: pages allowed past the budget (a deferring thread's).
    private func overBudget(_ shared: Int, by slack: Int = 0) -> Bool {
        var floor = floorPages.load(ordering: .relaxed)
        while floor >= 0 && shared < floor {
            let (exchanged, current) = floorPages.compareExchange(
                expected: floor,
                desired: shared,
                ordering: .relaxed
            )
            if exchanged { return false }
            floor = current
        }
        return floor < 0 || shared > floor + budgetPages + slack
    }

    /// Drops the pages of these ranges; called with the lock held, so that no range is advised after it
    /// was unregistered, and the floor measured afterwards is not overwritten by a stale one.
    private func release(_ registered: [Int: [(start: UInt, length: Int)]]) {
        #if os(Linux)
        for ranges in registered.values {
            for range in ranges {
                _ = madvise(UnsafeMutableRawPointer(bitPattern: range.start), range.length, MADV_DONTNEED)
            }
        }
        if let shared = sharedResidentPages() { floorPages.store(shared, ordering: .relaxed) }
        releaseCount.add(1, ordering: .relaxed)
        #endif
    }

    private func loop() {
        #if os(Linux)
        var policy = HeapTrimPolicy(trimEvery: trimEvery, thresholdBytes: Self.trimAfterFreedBytes)
        policy.trimmed(freeBytes: Int(sluice_malloc_free_bytes()), anonymousBytes: anonymousResidentBytes())
        while true {
            Thread.sleep(forTimeInterval: interval)
            releaseAll()
            // Free bytes in the arenas count what was freed since the last trim (a trim leaves them free, only
            // no longer resident): past the threshold, trim now rather than at the next regular trim. They are
            // looked at only once anonymous memory has grown (`HeapTrimPolicy`): the look walks every arena.
            var trim = false
            switch policy.tick(anonymousBytes: anonymousResidentBytes()) {
            case .none: break
            case .trim: trim = true
            case .measureFree: trim = policy.freeBytesMeasured(Int(sluice_malloc_free_bytes()))
            }
            if trim {
                _ = malloc_trim(0)
                policy.trimmed(freeBytes: Int(sluice_malloc_free_bytes()), anonymousBytes: anonymousResidentBytes())
            }
        }
        #endif
    }

    /// Bytes freed into the arenas that trigger a trim before the regular one.
    static let trimAfterFreedBytes = 4 << 20

    /// Where the kernel mapped a file into this process (from `/proc/self/maps`; empty elsewhere).
    package static func mappings(of file: URL) -> [(start: UInt, length: Int)] {
        #if os(Linux)
        let path = file.resolvingSymlinksInPath().path
        // Not String(contentsOfFile:): it stops after the first page of a /proc file.
        guard let handle = FileHandle(forReadingAtPath: "/proc/self/maps") else { return [] }
        defer { try? handle.close() }
        let maps = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        var ranges: [(start: UInt, length: Int)] = []
        for line in maps.split(separator: "\n") where line.hasSuffix(" " + path) {
            let bounds = line.prefix { $0 != " " }.split(separator: "-")
            guard bounds.count == 2, let start = UInt(bounds[0], radix: 16), let end = UInt(bounds[1], radix: 16),
                end > start
            else { continue }
            ranges.append((start, Int(end - start)))
        }
        return ranges
        #else
        return []
        #endif
    }
}
