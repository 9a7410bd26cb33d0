import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A check of an LMDB data file against its own meta pages, before it is mapped.
///
/// LMDB maps `data.mdb` and trusts it: pages past the end of a truncated file fault with SIGBUS when
/// touched, and an empty file is taken for a new environment. The two meta pages (pages 0 and 1) say
/// what the file must hold: LMDB uses the one with the larger transaction id, whose database roots
/// must lie in the file and whose last page number gives the size a whole file has (up to pages
/// allocated and never written, which are zero-filled so that touching them cannot fault).
///
/// Layout (LMDB 0.9, 64-bit): a 16-byte page header, then `MDB_meta`: magic `0xBEEFC0DE` (offset 16),
/// data version 1 (20), the page size in the free database's `md_pad` (40), the free and main databases'
/// root pages (80, 128), the last page number (136) and the transaction id (144), little-endian.
enum LMDBDataFile {
    /// What is wrong with a data file, in words for the user.
    struct Damage: Error, CustomStringConvertible {
        var description: String
        /// Whether the file is empty or ends inside its meta pages: what a file another process is creating
        /// looks like until its meta pages are written.
        var unfinished = false
    }

    static let magic: UInt32 = 0xBEEF_C0DE
    static let dataVersion: UInt32 = 1
    static let metaEnd = 152

    struct Meta {
        var pageSize: Int
        var lastPage: UInt64
        var transaction: UInt64
        /// Root pages of the free-page and main databases (``invalidPage`` when empty).
        var freeRoot: UInt64
        var mainRoot: UInt64
    }

    /// Throws ``Damage`` unless `url` is absent (a new environment) or a whole LMDB data file.
    ///
    /// A file that is empty or ends inside its meta pages may be one another process is creating right now
    /// (several runs opening one new store at once, as shards do): LMDB creates `data.mdb` and writes its
    /// meta pages while it holds a write lock on byte 0 of `lock.mdb`, then downgrades it to the shared lock
    /// every open environment holds. Such a file is checked again once that lock can be shared; only a file
    /// still unfinished then (an interrupted creation, a truncation) is damage.
    static func check(_ url: URL) throws {
        do {
            try checkOnce(url)
        } catch let damage as Damage where damage.unfinished {
            guard waitForCreator(url.deletingLastPathComponent().appendingPathComponent("lock.mdb")) else {
                throw damage
            }
            try checkOnce(url)
        }
    }

    /// `fcntl` commands for locks owned by an open file description (Linux's `<bits/fcntl-linux.h>`; Swift's
    /// Glibc module is imported without `_GNU_SOURCE`, which declares them). Such a lock conflicts with the
    /// process-owned locks LMDB takes, in this process too, and closing another descriptor of the file does
    /// not release it.
    static let ofdSetLock: Int32 = 37
    static let ofdSetLockWait: Int32 = 38

    /// Waits until no process holds LMDB's creator lock on `lockFile` (a shared lock on byte 0 can be
    /// taken), then lets go. False when there is no lock file (no LMDB ever opened the folder) or it cannot
    /// be locked.
    ///
    /// Closing a descriptor of `lockFile` releases every process-owned lock this process holds on it, so
    /// this is called only for an unfinished data file, which no environment in this process can have open
    /// (``LMDBEnvironment`` opens one at a time and checks under the same lock).
    private static func waitForCreator(_ lockFile: URL) -> Bool {
        let fd = open(lockFile.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var lock = flock()
        lock.l_type = Int16(F_RDLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 0
        lock.l_len = 1
        var rc: Int32
        repeat { rc = fcntl(fd, ofdSetLockWait, &lock) } while rc != 0 && errno == EINTR
        return rc == 0
    }

    private static func checkOnce(_ url: URL) throws {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return }
            throw Damage(description: "cannot open \(url.lastPathComponent): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw Damage(description: "cannot stat \(url.lastPathComponent): \(String(cString: strerror(errno)))")
        }
        let sizeBeforeMeta = Int(info.st_size)
        guard sizeBeforeMeta > 0 else {
            throw Damage(
                description:
                    "\(url.lastPathComponent) is empty (0 bytes): it was truncated, or its creation was interrupted",
                unfinished: true
            )
        }
        let first = try meta(fd, at: 0, fileSize: sizeBeforeMeta, name: url.lastPathComponent, page: 0)
        let second = try meta(fd, at: first.pageSize, fileSize: sizeBeforeMeta, name: url.lastPathComponent, page: 1)
        guard second.pageSize == first.pageSize else {
            throw Damage(
                description:
                    "the meta pages of \(url.lastPathComponent) disagree on the page size (\(first.pageSize), \(second.pageSize))"
            )
        }
        let current = second.transaction > first.transaction ? second : first
        // The size again, now that the meta pages are read: another process may have committed since the
        // first stat (several runs opening one store at once, as shards do). LMDB writes a transaction's
        // pages before its meta page and never shrinks the file, so a size taken after reading the meta
        // covers every page it names; the first one may not (a false "truncated").
        guard fstat(fd, &info) == 0 else {
            throw Damage(description: "cannot stat \(url.lastPathComponent): \(String(cString: strerror(errno)))")
        }
        let size = Int(info.st_size)
        let (pages, overflow) = current.lastPage.addingReportingOverflow(1)
        let (needed, tooLarge) = pages.multipliedReportingOverflow(by: UInt64(current.pageSize))
        guard !overflow, !tooLarge, needed <= UInt64(Int.max) else {
            throw Damage(
                description:
                    "the meta page of \(url.lastPathComponent) names an impossible last page (\(current.lastPage))"
            )
        }
        let pagesInFile = UInt64(size) / UInt64(current.pageSize)
        for (name, root) in [("main", current.mainRoot), ("free-page", current.freeRoot)]
        where root != invalidPage && root >= pagesInFile {
            throw Damage(
                description:
                    "\(url.lastPathComponent) is \(size) bytes, but the root of its \(name) database is page \(root), past the end: the file was truncated"
            )
        }
        guard UInt64(size) < needed else { return }
        // The last page number also counts pages a transaction allocated and freed again without writing
        // them, so a whole file may end a few pages short of it; a truncated one falls far shorter.
        if UInt64(size) < needed - needed / 4 {
            throw Damage(
                description:
                    "\(url.lastPathComponent) is \(size) bytes, but its last committed transaction (\(current.transaction)) uses \(needed) bytes: the file was truncated"
            )
        }
        // A few pages short: most likely such free pages, possibly a small truncation. Mapped as it is, a
        // page past the end would fault (SIGBUS) when touched; zero-filled, a free page stays free, and a
        // page still in use reads as a corrupt page, which LMDB reports (MDB_CORRUPTED) instead.
        let writable = open(url.path, O_WRONLY | O_CLOEXEC)
        guard writable >= 0 else {
            throw Damage(
                description:
                    "\(url.lastPathComponent) is \(needed - UInt64(size)) bytes shorter than its meta page says, and cannot be extended: \(String(cString: strerror(errno)))"
            )
        }
        defer { close(writable) }
        guard ftruncate(writable, off_t(needed)) == 0 else {
            throw Damage(
                description:
                    "\(url.lastPathComponent) is \(needed - UInt64(size)) bytes shorter than its meta page says, and cannot be extended: \(String(cString: strerror(errno)))"
            )
        }
    }

    /// The root page number of an empty database.
    static let invalidPage = UInt64.max

    private static func meta(_ fd: Int32, at offset: Int, fileSize: Int, name: String, page: Int) throws -> Meta {
        guard fileSize >= offset + metaEnd else {
            throw Damage(
                description:
                    "\(name) is \(fileSize) bytes, too short to hold LMDB meta page \(page): the file was truncated",
                unfinished: true
            )
        }
        var bytes = [UInt8](repeating: 0, count: metaEnd)
        let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress!, metaEnd, off_t(offset)) }
        guard n == metaEnd else {
            throw Damage(description: "cannot read meta page \(page) of \(name): \(String(cString: strerror(errno)))")
        }
        func integer<T: FixedWidthInteger>(_ type: T.Type, _ at: Int) -> T {
            var value: T = 0
            for index in (0..<MemoryLayout<T>.size).reversed() { value = value << 8 | T(bytes[at + index]) }
            return value
        }
        guard integer(UInt32.self, 16) == magic else {
            throw Damage(
                description:
                    "meta page \(page) of \(name) lacks LMDB's magic number: the file is damaged or is not an LMDB data file"
            )
        }
        let version = integer(UInt32.self, 20)
        guard version == dataVersion else {
            throw Damage(
                description:
                    "meta page \(page) of \(name) has data version \(version), this LMDB reads version \(dataVersion)"
            )
        }
        let pageSize = Int(integer(UInt32.self, 40))
        guard pageSize >= 512, pageSize <= 65_536, pageSize & (pageSize - 1) == 0 else {
            throw Damage(description: "meta page \(page) of \(name) names an impossible page size (\(pageSize))")
        }
        return Meta(
            pageSize: pageSize,
            lastPage: integer(UInt64.self, 136),
            transaction: integer(UInt64.self, 144),
            freeRoot: integer(UInt64.self, 80),
            mainRoot: integer(UInt64.self, 128)
        )
    }
}
