import CLMDB
import Foundation
import Synchronization

/// One page a read fault in an LMDB map, not the page and its cached neighbours (Linux 6.7 and later), except
/// while a scan runs.
///
/// On a read fault in a file mapping, Linux maps the faulting page and the neighbours of it that are in the page
/// cache, up to 64 KB and more with large folios (fault-around). For LMDB's random point reads that is ~20 pages
/// a fault, none of them needed: the map's resident memory grows ~20× faster than what is read, so the
/// ``ResidentMemoryReleaser`` releases ~20× as often, and each release unmaps the B-trees' branch pages too, which
/// the next reads fault back. At 100,000 vectors that was 37 faults a search, and with fault-around off a search
/// took 20–34% less CPU (docs/LOCAL_INDEX.md, "What a store search spends beyond the graph").
///
/// The kernel skips fault-around only for a range registered with a userfaultfd in write-protect mode
/// (`uffd_disable_fault_around`); `MADV_RANDOM` does not change it. So the map is registered with one
/// process-wide userfaultfd in asynchronous write-protect mode, where the kernel resolves write-protect faults
/// itself — and there are none: the map is read-only, LMDB writes with `pwrite`, and nothing is ever
/// write-protected. Reads see the page cache as before (a `pwrite` is seen through the map at once).
///
/// **Scans keep fault-around.** A cursor walking many entries in key order reads neighbouring pages, which
/// fault-around maps 16 at a time: without it the exact scan took twice as long. So a scan (``beginScan()``,
/// which ``LMDBTransaction/forEach(_:from:largeValues:_:)`` calls once it has visited
/// ``LMDBTransaction/scanEntries`` entries) unregisters the map while it runs, and the last scan to end registers it
/// again; point reads running meanwhile fault as the kernel does by default.
///
/// **Read-only opens.** Registration needs a mapping that could be made writable (`VM_MAYWRITE`), which LMDB's map
/// of a data file it opened read-only (`MDB_RDONLY`: `serve`, `search`, `ask`, `export`) is not. For those the map
/// is made again, identical, from a descriptor of the same file opened for reading and writing
/// (`sluice_lmdb_remap_writable`) when this user may write it — as a read-only command must be able to write the
/// folder's lock file anyway; LMDB still opens no write transaction there.
///
/// Where it cannot be done the map keeps the kernel's behaviour (``isOff`` is false): a kernel before 6.7, a
/// `userfaultfd` refused (some seccomp profiles), a data file this user may not write, no `/proc`. Setting
/// `SLUICE_LMDB_FAULT_AROUND=kernel` keeps the kernel's behaviour everywhere.
package final class LMDBMapFaultAround: Sendable {
    /// Whether the environment asks to keep the kernel's fault-around.
    static let keptByEnvironment = ProcessInfo.processInfo.environment["SLUICE_LMDB_FAULT_AROUND"] == "kernel"

    /// The process's userfaultfd (opened at first use and kept for the process's life: closing it would
    /// unregister every map), or the `errno` of why there is none.
    private static let descriptor: Result<Int32, Unavailable> = {
        #if os(Linux)
        let fd = sluice_lmdb_uffd_open()
        return fd >= 0 ? .success(fd) : .failure(Unavailable(errno: -fd))
        #else
        return .failure(Unavailable(errno: ENOSYS))
        #endif
    }()

    /// Whether maps can be registered in this process (a userfaultfd with asynchronous write-protect, and not
    /// `SLUICE_LMDB_FAULT_AROUND=kernel`).
    package static var available: Bool {
        guard !keptByEnvironment, case .success = descriptor else { return false }
        return true
    }

    /// Why fault-around stays on.
    struct Unavailable: Error {
        var errno: Int32
    }

    /// Why a map of this process keeps the kernel's fault-around, for an operator (`sluice status`, `/ready`):
    /// `mapFound` is whether the open found its map in `/proc/self/maps`, `registered` whether registering it
    /// (after making it again, for a read-only open) succeeded, `readOnly` whether the open was read-only. Nil when
    /// it was turned off.
    static func keptReason(mapFound: Bool, registered: Bool, readOnly: Bool) -> String? {
        if registered { return nil }
        if keptByEnvironment { return "SLUICE_LMDB_FAULT_AROUND=kernel is set" }
        if case .failure(let why) = descriptor {
            #if os(Linux)
            let error = String(cString: strerror(why.errno))
            return "this process has no userfaultfd with asynchronous write-protect (\(error)): "
                + "Linux before 6.7, or a seccomp profile that refuses userfaultfd"
            #else
            return "userfaultfd is Linux's"
            #endif
        }
        if !mapFound { return "the map was not found in /proc/self/maps" }
        // A read-only open's map is made again from a read-write descriptor first, which a data file this user may
        // not write refuses.
        return readOnly
            ? "the map of this read-only open could not be made registrable (a data file this user may not write?)"
            : "the kernel refused to register the map"
    }

    private let fd: Int32
    private let range: (start: UInt, length: Int)
    /// Scans running, and whether the map is registered now.
    private let state = Mutex<(scans: Int, registered: Bool)>((0, true))
    /// Scans that unregistered the map (for tests).
    private let unregistrations = Atomic<Int>(0)

    private init(fd: Int32, range: (start: UInt, length: Int)) {
        self.fd = fd
        self.range = range
    }

    /// Turns fault-around off for the map at `range` (page-aligned, as `/proc/self/maps` gives it) of the
    /// environment `handle`, just opened: nothing may have read through the map yet when it was opened read-only
    /// (its map is made again).
    /// - Returns: the map's registration, or nil when it keeps the kernel's fault-around.
    static func turnOff(_ range: (start: UInt, length: Int), of handle: OpaquePointer, readOnly: Bool) -> Self? {
        guard !keptByEnvironment, range.length > 0 else { return nil }
        #if os(Linux)
        guard case .success(let fd) = descriptor else { return nil }
        var rc = sluice_lmdb_uffd_register(fd, UInt(range.start), range.length)
        if rc == -EPERM && readOnly {
            var dataFD: Int32 = -1
            guard mdb_env_get_fd(handle, &dataFD) == 0,
                sluice_lmdb_remap_writable(dataFD, UInt(range.start), range.length) == 0
            else { return nil }
            rc = sluice_lmdb_uffd_register(fd, UInt(range.start), range.length)
        }
        return rc == 0 ? Self(fd: fd, range: range) : nil
        #else
        return nil
        #endif
    }

    /// Whether the map is registered now: point reads fault one page at a time (false while a scan runs).
    package var isOff: Bool { state.withLock { $0.registered } }

    /// How many times a scan gave the map back its fault-around (for tests).
    package var scansUnregistered: Int { unregistrations.load(ordering: .relaxed) }

    /// A scan starts: the first one running unregisters the map (0.1–1 ms: the kernel walks the map's
    /// 64 GB of page tables).
    func beginScan() {
        state.withLock { state in
            state.scans += 1
            guard state.scans == 1, state.registered else { return }
            #if os(Linux)
            if sluice_lmdb_uffd_unregister(fd, UInt(range.start), range.length) == 0 {
                state.registered = false
                unregistrations.add(1, ordering: .relaxed)
            }
            #endif
        }
    }

    /// A scan ended: the last one running registers the map again (should that fail, it keeps fault-around).
    func endScan() {
        state.withLock { state in
            state.scans -= 1
            guard state.scans == 0, !state.registered else { return }
            #if os(Linux)
            state.registered = sluice_lmdb_uffd_register(fd, UInt(range.start), range.length) == 0
            #endif
        }
    }
}
