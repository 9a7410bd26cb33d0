import CLMDB
import Foundation
import SluiceCore
import Synchronization

/// A named database of an environment (LMDB's `MDB_dbi`), for the modules that do not import `CLMDB`.
package typealias LMDBDatabase = MDB_dbi

/// One LMDB environment (a folder with `data.mdb` and `lock.mdb`) and its named databases.
///
/// Opened with `MDB_NOTLS`, so read transactions are not tied to a thread. Every transaction is run
/// inside one synchronous closure (``read(_:)`` / ``write(_:)``) so that begin and commit happen on the
/// same thread; callers on the cooperative pool wrap write calls in a ``BlockingExecutor``.
package final class LMDBEnvironment: @unchecked Sendable {
    // The env handle is thread-safe by LMDB's contract (with MDB_NOTLS); it is freed in deinit only.
    private let env: OpaquePointer
    package let path: URL
    private let databaseLock = NSLock()
    private var databases: [String: MDB_dbi] = [:]
    /// This environment's memory map, registered with the ``ResidentMemoryReleaser`` (its token; tests take the
    /// map out of the releaser's hands to read what a read left resident).
    let mapping: Int?
    /// The map's registration that turns the kernel's fault-around off for point reads (``LMDBMapFaultAround``);
    /// nil where that cannot be done.
    package let faultAround: LMDBMapFaultAround?
    /// Whether point reads in this environment's map fault one page at a time now (``LMDBMapFaultAround``).
    package var faultAroundOff: Bool { faultAround?.isOff ?? false }
    /// Why this environment's map keeps the kernel's fault-around for point reads, or nil when they fault one page
    /// at a time (scans keep it either way): what `sluice status` and `/ready` report (`store_map`).
    package let faultAroundKept: String?
    /// Whose errors this environment's are: the code and the owner named in their messages.
    package let errors: ErrorLabel
    /// The data file, from which read transactions copy large values when asked (``LMDBValueFile``).
    private let valueFile: LMDBValueFile?
    /// The interval between budget checks the last transaction ended with (``ReleaseCheckPolicy``): where
    /// the next one starts.
    private let checkInterval = CheckInterval()
    /// The operations between two budget checks where the next transaction starts (for tests).
    package var nextCheckInterval: Int { checkInterval.value.load(ordering: .relaxed) }

    /// An interval shared by an environment's transactions (a class: an `Atomic` cannot be passed around).
    final class CheckInterval: Sendable {
        let value = Atomic<Int>(64)
    }

    /// The code an environment's errors carry, and the owner their messages name ("the local store at
    /// …"): a full disk under a sink's environment is the sink's failure, not the state's.
    package struct ErrorLabel: Sendable {
        package var code: SluiceError.Code
        package var owner: String?
        /// The code and the advice (what happened, how to recover) of errors that mean the file is damaged.
        package var damaged: (code: SluiceError.Code, advice: String)?
        /// The environment's folder: where a failed write looks for free space (set by the environment).
        var directory: URL?
        package init(
            code: SluiceError.Code = .state,
            owner: String? = nil,
            damaged: (code: SluiceError.Code, advice: String)? = nil
        ) {
            self.code = code
            self.owner = owner
            self.damaged = damaged
        }

        func error(_ message: String) -> SluiceError {
            SluiceError(code, owner.map { "\($0): \(message)" } ?? message)
        }

        /// The error for a damaged data file.
        package func damage(_ what: String) -> SluiceError {
            let message = (owner.map { "\($0) is damaged: " } ?? "damaged: ") + what
            guard let damaged else { return SluiceError(code, message) }
            return SluiceError(damaged.code, message + ". " + damaged.advice)
        }

        /// Whether the file system holding `directory` has (almost) no block left for an unprivileged write.
        static func isFull(_ directory: URL) -> Bool {
            var info = statvfs()
            guard statvfs(directory.path, &info) == 0 else { return false }
            return UInt64(info.f_bavail) * UInt64(info.f_frsize) < 64 * 1024
        }

        func check(_ rc: Int32, _ what: String) throws {
            guard rc != 0 else { return }
            if [MDB_CORRUPTED, MDB_PAGE_NOTFOUND, MDB_INVALID, MDB_VERSION_MISMATCH].contains(rc) {
                throw damage("\(what): \(LMDBEnvironment.message(rc))")
            }
            // LMDB reports a short write as EIO: on a file system with no room left, that is a full disk.
            if rc == ENOSPC || (rc == EIO && directory.map(Self.isFull) == true) {
                throw SluiceError(
                    .diskFull,
                    (owner.map { "\($0): " } ?? "") + "\(what): no space left on device; free space, then run again"
                )
            }
            // A full map is told apart by its cause (``LMDBMapFull``), not by its words.
            throw SluiceError(
                code,
                owner.map { "\($0): \(what): \(LMDBEnvironment.message(rc))" }
                    ?? "\(what): \(LMDBEnvironment.message(rc))",
                cause: rc == MDB_MAP_FULL ? LMDBMapFull() : nil
            )
        }
    }

    /// Opens (creating the folder if needed) an environment.
    /// - Parameters:
    ///   - mapSize: the largest the data file may grow (virtual address space, not disk).
    ///   - errors: the code and owner of this environment's errors.
    /// - Throws: ``ErrorLabel/damage(_:)``'s error when the data file is truncated or damaged (checked
    ///   before it is mapped: LMDB would take an empty file for a new one, and fault on pages past the end
    ///   of a short one).
    package init(
        path: URL,
        mapSize: Int = 64 << 30,
        maxDatabases: Int = 8,
        maxReaders: Int = 256,
        readOnly: Bool = false,
        errors: ErrorLabel = ErrorLabel()
    ) throws {
        self.path = path
        var errors = errors
        errors.directory = path
        self.errors = errors
        if !readOnly {
            try FileManager.default.createDirectory(at: path, withIntermediateDirectories: true)
        }
        var handle: OpaquePointer?
        try errors.check(mdb_env_create(&handle), "mdb_env_create")
        guard let handle else { throw errors.error("mdb_env_create returned no handle") }
        mdb_env_set_mapsize(handle, mapSize)
        mdb_env_set_maxdbs(handle, MDB_dbi(maxDatabases))
        mdb_env_set_maxreaders(handle, UInt32(maxReaders))
        let flags = UInt32(MDB_NOTLS) | UInt32(MDB_NORDAHEAD) | (readOnly ? UInt32(MDB_RDONLY) : 0)
        // LMDB maps the data file once, at open, with the full map size; the mapping never moves. Only the
        // mapping this open creates is registered: another environment open on the same file has its own,
        // which is unmapped when that one closes — releasing its old range later could zero whatever the
        // kernel puts there next (heap blocks are mapped too). Opens are serialized so that the mappings
        // seen before and after belong to this one.
        // The data file is checked under the same lock: an unfinished one may be another process's creation,
        // waited for through `lock.mdb` (``LMDBDataFile/check(_:)``), which must never race an open here.
        let dataFile = path.appendingPathComponent("data.mdb")
        Self.openLock.lock()
        do {
            try LMDBDataFile.check(dataFile)
        } catch let damage as LMDBDataFile.Damage {
            Self.openLock.unlock()
            mdb_env_close(handle)
            throw errors.damage(damage.description)
        } catch {
            Self.openLock.unlock()
            mdb_env_close(handle)
            throw error
        }
        let before = ResidentMemoryReleaser.mappings(of: dataFile)
        let rc = mdb_env_open(handle, path.path, flags, 0o644)
        let created =
            rc == 0
            ? ResidentMemoryReleaser.mappings(of: dataFile).filter { range in !before.contains { $0 == range } } : []
        // Under the lock too: a read-only open's map is made again, briefly a second mapping of the file, which
        // another open must not take for its own.
        let faultAround =
            created.count == 1 ? LMDBMapFaultAround.turnOff(created[0], of: handle, readOnly: readOnly) : nil
        Self.openLock.unlock()
        if rc != 0 {
            mdb_env_close(handle)
            // Another user's folder is the user's to sort out (exit 1), not a bug: LMDB writes its lock file
            // even to read, so a read-only command needs write access too.
            if rc == EACCES || rc == EPERM {
                throw SluiceError(
                    .usage,
                    (errors.owner.map { "\($0): " } ?? "")
                        + "permission denied: this user (uid \(getuid())) cannot write \(path.path), and LMDB writes its lock file there even to read. Run as the user that owns the folder (the one that runs the pipeline), or give this user write access"
                )
            }
            throw errors.error("cannot open LMDB environment at \(path.path): \(LMDBEnvironment.message(rc))")
        }
        self.env = handle
        // The map is the one range this open created (none when /proc is not there: no copies then).
        self.valueFile = created.count == 1 ? LMDBValueFile(environment: handle, map: created[0]) : nil
        self.faultAround = faultAround
        self.faultAroundKept = LMDBMapFaultAround.keptReason(
            mapFound: created.count == 1,
            registered: faultAround != nil,
            readOnly: readOnly
        )
        self.mapping = ResidentMemoryReleaser.shared.register(created)
    }

    /// How many large values read transactions have copied from the data file instead of reading them
    /// through the map (``LMDBTransaction/LargeValues/copied``); 0 when the file could not be found.
    package var valuesCopied: Int { valueFile?.copies.value.load(ordering: .relaxed) ?? 0 }

    /// Serializes opens (see `init`).
    private static let openLock = NSLock()

    deinit {
        ResidentMemoryReleaser.shared.unregister(mapping)  // before the map goes away
        mdb_env_close(env)
    }

    /// The handle of a named database, created on first use (unless the environment is read-only).
    package func database(_ name: String) throws -> LMDBDatabase {
        guard let dbi = try existingDatabase(name) else {
            throw errors.error("database '\(name)' does not exist in \(path.path)")
        }
        return dbi
    }

    /// The handle of a named database, or nil when a read-only environment has none (a store written by an
    /// older version, before that database existed). A writable environment creates it.
    package func existingDatabase(_ name: String) throws -> LMDBDatabase? {
        databaseLock.lock()
        defer { databaseLock.unlock() }
        if let dbi = databases[name] { return dbi }
        var txn: OpaquePointer?
        var flags: UInt32 = 0
        mdb_env_get_flags(env, &flags)
        let readOnly = flags & UInt32(MDB_RDONLY) != 0
        try errors.check(mdb_txn_begin(env, nil, readOnly ? UInt32(MDB_RDONLY) : 0, &txn), "mdb_txn_begin")
        var dbi: MDB_dbi = 0
        let rc = mdb_dbi_open(txn, name, readOnly ? 0 : UInt32(MDB_CREATE), &dbi)
        if rc != 0 {
            mdb_txn_abort(txn)
            if rc == MDB_NOTFOUND { return nil }
            throw errors.error("mdb_dbi_open(\(name)): \(Self.message(rc))")
        }
        try errors.check(mdb_txn_commit(txn), "mdb_txn_commit")
        databases[name] = dbi
        return dbi
    }

    /// Runs `body` in a read-only transaction.
    package func read<T>(_ body: (LMDBTransaction) throws -> T) throws -> T {
        var txn: OpaquePointer?
        try errors.check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin(read)")
        let transaction = LMDBTransaction(
            txn: txn!,
            errors: errors,
            file: valueFile,
            faultAround: faultAround,
            checkEvery: checkInterval
        )
        defer {
            mdb_txn_abort(txn)
            transaction.ended()
            ResidentMemoryReleaser.shared.releaseIfOverBudget()
        }
        return try body(transaction)
    }

    /// Runs `body` in a write transaction, committed when `body` returns and aborted when it throws.
    /// - Important: blocks while another write transaction is open; call it from a blocking executor.
    package func write<T>(_ body: (LMDBTransaction) throws -> T) throws -> T {
        var txn: OpaquePointer?
        try errors.check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin(write)")
        let result: T
        let transaction = LMDBTransaction(
            txn: txn!,
            errors: errors,
            faultAround: faultAround,
            checkEvery: checkInterval
        )
        defer { transaction.ended() }
        do {
            result = try body(transaction)
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
        try errors.check(mdb_txn_commit(txn), "mdb_txn_commit")
        ResidentMemoryReleaser.shared.releaseIfOverBudget()
        return result
    }

    static func message(_ rc: Int32) -> String {
        if rc == MDB_MAP_FULL { return "the LMDB map is full (raise the map size)" }
        return String(cString: mdb_strerror(rc))
    }
}

/// A transaction handle, valid only inside the closure it was passed to.
///
/// Every operation maps the pages it reads; every few of them (64 while they barely fault, down to every one
/// while each faults many: ``ReleaseCheckPolicy``) the map's resident pages are checked against the
/// ``ResidentMemoryReleaser``'s budget, so that one large transaction (a document of thousands of chunks looked
/// up in the cache, a full scan) cannot map the whole store. Values returned
/// are copied out of the map first, and a page dropped mid-transaction is faulted back unchanged.
/// A search's scan of large values (``forEach(_:from:largeValues:_:)`` with ``LargeValues/copied``) copies
/// them from the data file instead, so that they never enter the resident set (``LMDBValueFile``).
package struct LMDBTransaction {
    let txn: OpaquePointer
    private let errors: LMDBEnvironment.ErrorLabel
    private let meter: OperationMeter
    /// The data file, in a read transaction (a write transaction's values may be its own dirty pages,
    /// which are not in the file yet).
    private let file: LMDBValueFile?
    /// The map's fault-around switch, which a long ``forEach(_:from:largeValues:_:)`` turns back on while it runs.
    private let faultAround: LMDBMapFaultAround?

    /// Entries a ``forEach(_:from:largeValues:_:)`` visits before it counts as a scan and gives the map back the
    /// kernel's fault-around until it ends (``LMDBMapFaultAround``): past a few leaf pages of entries, so that the
    /// short range reads of point look-ups do not pay the switch (0.1–1 ms).
    package static let scanEntries = 256

    /// Values from this size up (four pages) are copied from the data file in read transactions while the map
    /// faults one page at a time (``LMDBMapFaultAround``): one `pread` costs less than a fault a page.
    static let multiPageValueBytes = 16 << 10

    /// Whether `value`, read through the map as ``LargeValues/mapped``, is copied from the file instead: when it
    /// spans ``multiPageValueBytes`` and the map faults one page at a time now.
    private func copiesFromFile(_ value: MDB_val) -> Bool {
        value.mv_size >= Self.multiPageValueBytes && faultAround?.isOff == true
    }

    init(
        txn: OpaquePointer,
        errors: LMDBEnvironment.ErrorLabel,
        file: LMDBValueFile? = nil,
        faultAround: LMDBMapFaultAround? = nil,
        checkEvery: LMDBEnvironment.CheckInterval
    ) {
        self.txn = txn
        self.errors = errors
        self.file = file
        self.faultAround = faultAround
        self.meter = OperationMeter(checkEvery: checkEvery)
    }

    /// Hands the interval this transaction ended with to its environment's next transaction.
    func ended() { meter.ended() }

    /// The operations that follow will fault more than those before (random keys after sorted ones): the
    /// budget is checked after the next one, and the interval grows back as the checks find little growth
    /// (``ReleaseCheckPolicy/expectFaults()``).
    package func expectFaults() { meter.expectFaults() }

    /// How ``forEach(_:from:largeValues:_:)`` and ``get(_:_:largeValues:)`` read values larger than half a
    /// page (those on their own pages).
    package enum LargeValues: Sendable {
        /// Through the map, as every other read: the pages stay mapped until the next release (the
        /// ``ResidentMemoryReleaser``'s budget), and a value read again soon is read in place. A read
        /// transaction copies one of four pages or more from the file all the same while the map faults one page
        /// at a time (``LMDBMapFaultAround``).
        case mapped
        /// Copied from the data file (`pread`), in a read transaction: their pages are never mapped, so a
        /// scan over many of them (a search's `ivf` lists, the exact scan, the graph's build from a snapshot
        /// and its catch-up) neither grows the resident set nor passes the releaser's budget, at the cost of a
        /// system call and a copy a value. A write transaction reads them through the map.
        case copied
    }

    /// Counts operations and checks the budget every ``ReleaseCheckPolicy/interval`` of them; not shared
    /// between threads (a transaction runs in one synchronous closure).
    private final class OperationMeter {
        private var count = 0
        private var policy: ReleaseCheckPolicy
        private let checkEvery: LMDBEnvironment.CheckInterval

        init(checkEvery: LMDBEnvironment.CheckInterval) {
            let releaser = ResidentMemoryReleaser.shared
            self.checkEvery = checkEvery
            policy = ReleaseCheckPolicy(
                targetPages: releaser.checkTargetPages,
                interval: checkEvery.value.load(ordering: .relaxed)
            )
            if let start = releaser.startingPoint() {
                policy.released(residentPages: start.pages, releases: start.releases)
            }
        }

        func tick() {
            count &+= 1
            if count & (policy.interval - 1) == 0 {
                ResidentMemoryReleaser.shared.releaseIfOverBudget(adapting: &policy)
            }
        }

        func ended() { checkEvery.value.store(policy.interval, ordering: .relaxed) }

        func expectFaults() { policy.expectFaults() }
    }

    /// The value of `key`, copied out of the map (or, for a large value with ``LargeValues/copied`` in a read
    /// transaction, out of the data file); nil when there is none.
    /// - Parameter largeValues: how a value larger than half a page is read: through the map (the default), or
    ///   copied from the file so that its pages are never mapped (the graph's build and catch-up, which read
    ///   every vector once).
    package func get(_ dbi: LMDBDatabase, _ key: [UInt8], largeValues: LargeValues = .mapped) throws -> [UInt8]? {
        meter.tick()
        var result: [UInt8]?
        try key.withUnsafeBytes { keyBytes in
            var k = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
            var v = MDB_val()
            let rc = mdb_get(txn, dbi, &k, &v)
            if rc == MDB_NOTFOUND { return }
            try errors.check(rc, "mdb_get")
            if let file, largeValues == .copied || copiesFromFile(v) {
                var copy: [UInt8] = []
                if file.copy(v, into: &copy) {
                    result = copy
                    return
                }
            }
            result = Array(UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
        }
        return result
    }

    /// Stores `value` under `key`.
    /// - Parameter append: the key is above every key of the database (LMDB's `MDB_APPEND`): it goes at the end
    ///   without a search, and a full last page is split at the end, not in the middle, so pages written in key
    ///   order stay full. A key that is not above the last fails (`MDB_KEYEXIST`), writing nothing.
    package func put(_ dbi: LMDBDatabase, _ key: [UInt8], _ value: [UInt8], append: Bool = false) throws {
        meter.tick()
        try key.withUnsafeBytes { keyBytes in
            try value.withUnsafeBytes { valueBytes in
                var k = MDB_val(
                    mv_size: keyBytes.count,
                    mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress)
                )
                var v = MDB_val(
                    mv_size: valueBytes.count,
                    mv_data: UnsafeMutableRawPointer(mutating: valueBytes.baseAddress)
                )
                try errors.check(mdb_put(txn, dbi, &k, &v, append ? UInt32(MDB_APPEND) : 0), "mdb_put")
            }
        }
    }

    /// Deletes a key; returns whether it existed.
    @discardableResult
    package func delete(_ dbi: LMDBDatabase, _ key: [UInt8]) throws -> Bool {
        meter.tick()
        return try key.withUnsafeBytes { keyBytes in
            var k = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
            let rc = mdb_del(txn, dbi, &k, nil)
            if rc == MDB_NOTFOUND { return false }
            try errors.check(rc, "mdb_del")
            return true
        }
    }

    /// Deletes every key in `[from, before)` (byte order); returns how many. One cursor walks the range,
    /// so a contiguous run of keys costs a walk, not a descent per key.
    @discardableResult
    package func deleteRange(_ dbi: LMDBDatabase, from: [UInt8], before: [UInt8]) throws -> Int {
        let cursor = try openCursor(dbi)
        defer { mdb_cursor_close(cursor) }
        var k = MDB_val()
        var v = MDB_val()
        var rc = Self.seek(cursor, atOrAfter: from, &k, &v)
        var deleted = 0
        while rc == 0 {
            meter.tick()
            let key = UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size)
            guard key.lexicographicallyPrecedes(before) else { break }
            try errors.check(mdb_cursor_del(cursor, 0), "mdb_cursor_del")
            deleted += 1
            // After a delete, MDB_NEXT yields the entry that followed the deleted one (LMDB's C_DEL).
            rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)
        }
        if rc != MDB_NOTFOUND { try errors.check(rc, "mdb_cursor_get") }
        return deleted
    }

    /// Calls `body` with the entry of the largest key at or before `key` (byte order), and returns what it
    /// returns; nil, without calling it, when every key is after `key`. The buffers are valid only during the
    /// call; a value of four pages or more is copied from the file as ``get(_:_:largeValues:)`` copies it.
    package func withFloor<T>(
        _ dbi: LMDBDatabase,
        _ key: [UInt8],
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> T
    ) throws -> T? {
        meter.tick()
        let cursor = try openCursor(dbi)
        defer { mdb_cursor_close(cursor) }
        var k = MDB_val()
        var v = MDB_val()
        var rc = Self.seek(cursor, atOrAfter: key, &k, &v)
        if rc == MDB_NOTFOUND {
            rc = mdb_cursor_get(cursor, &k, &v, MDB_LAST)
        } else if rc == 0 && !UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size).elementsEqual(key) {
            rc = mdb_cursor_get(cursor, &k, &v, MDB_PREV)
        }
        if rc == MDB_NOTFOUND { return nil }
        try errors.check(rc, "mdb_cursor_get")
        let found = UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size)
        if let file, copiesFromFile(v) {
            var copy: [UInt8] = []
            if file.copy(v, into: &copy) { return try copy.withUnsafeBytes { try body(found, $0) } }
        }
        return try body(found, UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
    }

    /// A cursor on `dbi` in this transaction; the caller closes it (`mdb_cursor_close`).
    private func openCursor(_ dbi: LMDBDatabase) throws -> OpaquePointer? {
        var cursor: OpaquePointer?
        try errors.check(mdb_cursor_open(txn, dbi, &cursor), "mdb_cursor_open")
        return cursor
    }

    /// Moves `cursor` to the first key at or after `key` (`MDB_SET_RANGE`), its entry in `k` and `v`.
    private static func seek(
        _ cursor: OpaquePointer?,
        atOrAfter key: [UInt8],
        _ k: inout MDB_val,
        _ v: inout MDB_val
    )
        -> Int32
    {
        key.withUnsafeBytes { start in
            k = MDB_val(mv_size: start.count, mv_data: UnsafeMutableRawPointer(mutating: start.baseAddress))
            return mdb_cursor_get(cursor, &k, &v, MDB_SET_RANGE)
        }
    }

    /// Number of entries in a database.
    package func count(_ dbi: LMDBDatabase) throws -> Int {
        var stat = MDB_stat()
        try errors.check(mdb_stat(txn, dbi, &stat), "mdb_stat")
        return Int(stat.ms_entries)
    }

    /// Bytes of the pages a database occupies (branch, leaf and overflow pages).
    package func size(_ dbi: LMDBDatabase) throws -> Int {
        var stat = MDB_stat()
        try errors.check(mdb_stat(txn, dbi, &stat), "mdb_stat")
        return Int(stat.ms_psize) * (stat.ms_branch_pages + stat.ms_leaf_pages + stat.ms_overflow_pages)
    }

    /// Empties a database.
    package func drop(_ dbi: LMDBDatabase) throws {
        try errors.check(mdb_drop(txn, dbi, 0), "mdb_drop")
    }

    /// Visits entries in key order, starting at the first key ≥ `from` (all when nil); `body` returns
    /// false to stop. The buffers are valid only during the call.
    /// - Parameter largeValues: how values larger than half a page are read: through the map (the default)
    ///   or, for a search's scan, copied from the file (``LargeValues/copied``).
    package func forEach(
        _ dbi: LMDBDatabase,
        from: [UInt8]? = nil,
        largeValues: LargeValues = .mapped,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        let copyAll = largeValues == .copied
        var copy: [UInt8] = []
        let cursor = try openCursor(dbi)
        var visited = 0
        defer {
            mdb_cursor_close(cursor)
            if visited > Self.scanEntries { faultAround?.endScan() }
        }
        var k = MDB_val()
        var v = MDB_val()
        var rc: Int32
        if let from {
            rc = Self.seek(cursor, atOrAfter: from, &k, &v)
        } else {
            rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST)
        }
        while rc == 0 {
            meter.tick()
            visited += 1
            if visited == Self.scanEntries + 1 { faultAround?.beginScan() }
            let key = UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size)
            let more: Bool
            if let file, copyAll || copiesFromFile(v), file.copy(v, into: &copy) {
                more = try copy.withUnsafeBytes { try body(key, $0) }
            } else {
                more = try body(key, UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
            }
            if !more { return }
            rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)
        }
        if rc != MDB_NOTFOUND { try errors.check(rc, "mdb_cursor_get") }
    }
}
