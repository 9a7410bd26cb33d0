import CLMDB
import Foundation
import Synchronization

/// An environment's data file, read with `pread`: how a read transaction copies a large value out of the file
/// instead of reading it through the map (``LMDBTransaction/LargeValues/copied``).
///
/// A value larger than half a page sits on its own (overflow) pages, and LMDB hands out a pointer to them
/// without touching them. Read through the map, each such value faults, and the kernel maps up to 15 cached
/// neighbours with it (fault-around, 64 KB): a search scanning thousands of scattered values grows the
/// process's file-backed resident memory by up to 16 pages a value, and the ``ResidentMemoryReleaser`` drops them
/// every 4 MB — about 180 releases and 14,500 re-faults for one `ivf` query at a million vectors (measured with
/// `pread` instead: under a third of the CPU, and no page of the values mapped; docs/BENCHMARKS.md, "Large
/// searches and the memory releaser"). `pread` copies from the same page cache the map shows, so a read
/// transaction gets the same bytes: the pages of its snapshot are committed (written to the file before the
/// meta page that made them visible) and are not reused while it is open.
struct LMDBValueFile: Sendable {
    /// The data file's descriptor (LMDB's own; valid while the environment is open).
    let descriptor: Int32
    /// Where the map starts, and its length.
    let mapStart: UInt
    let mapLength: Int
    /// Values from this size up are copied: half a page, above which a value cannot sit in a leaf page.
    let largeValueBytes: Int
    /// How many values have been copied from the file (``LMDBEnvironment/valuesCopied``).
    let copies = Count()

    /// A count shared by the copies of this value (a class: an `Atomic` cannot be copied).
    final class Count: Sendable {
        let value = Atomic<Int>(0)
    }

    /// The environment's data file, mapped at `map` (LMDB's `mdb_env_info` does not say where, unless the map
    /// is fixed: the caller found it in `/proc/self/maps`); nil when LMDB does not give its descriptor.
    init?(environment env: OpaquePointer, map: (start: UInt, length: Int)) {
        var stat = MDB_stat()
        var descriptor: Int32 = -1
        guard mdb_env_stat(env, &stat) == 0, mdb_env_get_fd(env, &descriptor) == 0, descriptor >= 0,
            stat.ms_psize > 0, map.start > 0, map.length > 0
        else { return nil }
        self.descriptor = descriptor
        self.mapStart = map.start
        self.mapLength = map.length
        self.largeValueBytes = Int(stat.ms_psize) / 2
    }

    /// Copies `value` from the file into `buffer` (resized to fit, its storage kept when large enough: a scan
    /// of values of many sizes allocates once per new largest size) and returns true when it is large and lies
    /// in the map; returns false otherwise, or when the read fails (then read it through the map).
    func copy(_ value: MDB_val, into buffer: inout [UInt8]) -> Bool {
        guard value.mv_size >= largeValueBytes, let data = value.mv_data else { return false }
        let address = UInt(bitPattern: data)
        guard value.mv_size <= mapLength, address >= mapStart,
            address - mapStart <= UInt(mapLength - value.mv_size)
        else { return false }
        if buffer.count > value.mv_size {
            buffer.removeLast(buffer.count - value.mv_size)  // keeps the storage
        } else if buffer.count < value.mv_size {
            buffer.append(contentsOf: repeatElement(0, count: value.mv_size - buffer.count))
        }
        let offset = off_t(address - mapStart)
        let copied = buffer.withUnsafeMutableBytes { raw in
            var done = 0
            while done < raw.count {
                let count = pread(descriptor, raw.baseAddress! + done, raw.count - done, offset + off_t(done))
                if count > 0 {
                    done += count
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    return false
                }
            }
            return true
        }
        if copied { copies.value.add(1, ordering: .relaxed) }
        return copied
    }
}
