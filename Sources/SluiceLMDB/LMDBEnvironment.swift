import CLMDB
import Foundation
import SluiceCore

/// A named database of an environment (LMDB's `MDB_dbi`), for the modules that do not import `CLMDB`.
package typealias LMDBDatabase = MDB_dbi

/// One LMDB environment (a folder with `data.mdb` and `lock.mdb`) and its named databases.
///
/// Opened with `MDB_NOTLS`, so read transactions are not tied to a thread. Every transaction is run
/// inside one synchronous closure (``read(_:)`` / ``write(_:)``) so that begin and commit happen on the
/// same thread; callers on the cooperative pool wrap write calls in a ``BlockingExecutor``.
///
/// Every environment opened on one data file in this process shares one LMDB handle
/// (``LMDBEnvironmentRegistry``): LMDB must never open an environment twice in a process.
package final class LMDBEnvironment: @unchecked Sendable {
    /// The process's handle on the data file, shared with every other open of it.
    private let shared: LMDBSharedEnvironment
    private var env: OpaquePointer { shared.env }
    package let path: URL
    /// Whether this open may only read (the shared handle may be writable for another user).
    package let readOnly: Bool
    /// Whose errors this environment's are: the code and the owner named in their messages.
    package let errors: ErrorLabel

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

    /// Opens (creating the folder if needed) an environment, or shares this process's open handle on the
    /// same data file (``LMDBEnvironmentRegistry``, which says when a second open is refused instead).
    /// - Parameters:
    ///   - mapSize: the largest the data file may grow (virtual address space, not disk); a handle this
    ///     process already has open keeps its own.
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
        self.readOnly = readOnly
        var errors = errors
        errors.directory = path
        self.errors = errors
        if !readOnly {
            try FileManager.default.createDirectory(at: path, withIntermediateDirectories: true)
        }
        shared = try LMDBEnvironmentRegistry.open(
            path: path,
            mapSize: mapSize,
            maxDatabases: maxDatabases,
            maxReaders: maxReaders,
            readOnly: readOnly,
            errors: errors
        )
    }

    deinit {
        LMDBEnvironmentRegistry.release(shared)
    }

    /// Whether this environment and `other` share one LMDB handle (one data file, opened once).
    package func sharesHandle(with other: LMDBEnvironment) -> Bool { shared === other.shared }

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
        try shared.database(name, create: !readOnly, errors: errors)
    }

    /// Runs `body` in a read-only transaction.
    package func read<T>(_ body: (LMDBTransaction) throws -> T) throws -> T {
        var txn: OpaquePointer?
        try errors.check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin(read)")
        defer {
            mdb_txn_abort(txn)
            ResidentMemoryReleaser.shared.releaseIfOverBudget()
        }
        return try body(LMDBTransaction(txn: txn!, errors: errors))
    }

    /// Runs `body` in a write transaction, committed when `body` returns and aborted when it throws.
    /// - Important: blocks while another write transaction is open; call it from a blocking executor.
    package func write<T>(_ body: (LMDBTransaction) throws -> T) throws -> T {
        // What LMDB answers on a read-only handle; this open may share a writable one.
        if readOnly { try errors.check(EACCES, "mdb_txn_begin(write)") }
        var txn: OpaquePointer?
        try errors.check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin(write)")
        let result: T
        do {
            result = try body(LMDBTransaction(txn: txn!, errors: errors))
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
/// Every operation maps the pages it reads; every 64 of them the map's resident pages are checked
/// against the ``ResidentMemoryReleaser``'s budget, so that one large transaction (a document of
/// thousands of chunks looked up in the cache, a full scan) cannot map the whole store. Values returned
/// are copied out of the map first, and a page dropped mid-transaction is faulted back unchanged.
package struct LMDBTransaction {
    let txn: OpaquePointer
    private let errors: LMDBEnvironment.ErrorLabel
    private let meter = OperationMeter()

    init(txn: OpaquePointer, errors: LMDBEnvironment.ErrorLabel) {
        self.txn = txn
        self.errors = errors
    }

    /// Counts operations; not shared between threads (a transaction runs in one synchronous closure).
    private final class OperationMeter {
        var count = 0
        func tick() {
            count &+= 1
            if count & 63 == 0 { ResidentMemoryReleaser.shared.releaseIfOverBudget() }
        }
    }

    package func get(_ dbi: LMDBDatabase, _ key: [UInt8]) throws -> [UInt8]? {
        meter.tick()
        var result: [UInt8]?
        try key.withUnsafeBytes { keyBytes in
            var k = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
            var v = MDB_val()
            let rc = mdb_get(txn, dbi, &k, &v)
            if rc == MDB_NOTFOUND { return }
            try errors.check(rc, "mdb_get")
            result = Array(UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
        }
        return result
    }

    package func put(_ dbi: LMDBDatabase, _ key: [UInt8], _ value: [UInt8]) throws {
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
                try errors.check(mdb_put(txn, dbi, &k, &v, 0), "mdb_put")
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
        var cursor: OpaquePointer?
        try errors.check(mdb_cursor_open(txn, dbi, &cursor), "mdb_cursor_open")
        defer { mdb_cursor_close(cursor) }
        var k = MDB_val()
        var v = MDB_val()
        var rc = from.withUnsafeBytes { start in
            k = MDB_val(mv_size: start.count, mv_data: UnsafeMutableRawPointer(mutating: start.baseAddress))
            return mdb_cursor_get(cursor, &k, &v, MDB_SET_RANGE)
        }
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
    package func forEach(
        _ dbi: LMDBDatabase,
        from: [UInt8]? = nil,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        var cursor: OpaquePointer?
        try errors.check(mdb_cursor_open(txn, dbi, &cursor), "mdb_cursor_open")
        defer { mdb_cursor_close(cursor) }
        var k = MDB_val()
        var v = MDB_val()
        var rc: Int32
        if let from {
            rc = from.withUnsafeBytes { start in
                k = MDB_val(mv_size: start.count, mv_data: UnsafeMutableRawPointer(mutating: start.baseAddress))
                return mdb_cursor_get(cursor, &k, &v, MDB_SET_RANGE)
            }
        } else {
            rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST)
        }
        while rc == 0 {
            meter.tick()
            let key = UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size)
            let value = UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size)
            if try !body(key, value) { return }
            rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)
        }
        if rc != MDB_NOTFOUND { try errors.check(rc, "mdb_cursor_get") }
    }
}
