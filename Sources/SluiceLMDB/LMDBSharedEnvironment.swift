import CLMDB
import Foundation
import SluiceCore

/// The one LMDB environment handle this process holds on a data file, shared by every
/// ``LMDBEnvironment`` opened on that file (``LMDBEnvironmentRegistry``).
///
/// LMDB's rule is that a process never opens one environment twice: a second `mdb_env_open` finds this
/// process holding the only lock on `lock.mdb` and re-initializes its mutexes under any transaction holding
/// them, and closing either handle drops the process's `fcntl` locks of both. So the handle, its memory
/// map and its named databases live here, once per file, and are closed when the last user closes.
final class LMDBSharedEnvironment: @unchecked Sendable {
    // The env handle is thread-safe by LMDB's contract (with MDB_NOTLS); it is closed by the registry only.
    let env: OpaquePointer
    /// The data file's identity: the registry's key.
    let identity: LMDBFileIdentity
    /// Whether LMDB opened it with `MDB_RDONLY`: no user of it can write.
    let readOnly: Bool
    /// What the first open asked for, which every later user gets (see ``LMDBEnvironmentRegistry``).
    let mapSize: Int
    let maxDatabases: Int
    let maxReaders: Int
    /// This environment's memory map, registered with the ``ResidentMemoryReleaser``.
    private let mapping: Int?
    /// Named databases opened so far. `mdb_dbi_open` must not run in two transactions of one process at
    /// once, so every user opens them under this one lock.
    private let databaseLock = NSLock()
    private var databases: [String: MDB_dbi] = [:]

    /// Opens the environment at `path`. Runs under the registry's lock only (see
    /// ``LMDBEnvironmentRegistry/open(path:mapSize:maxDatabases:maxReaders:readOnly:errors:)``).
    init(
        path: URL,
        mapSize: Int,
        maxDatabases: Int,
        maxReaders: Int,
        readOnly: Bool,
        errors: LMDBEnvironment.ErrorLabel
    ) throws {
        var handle: OpaquePointer?
        try errors.check(mdb_env_create(&handle), "mdb_env_create")
        guard let handle else { throw errors.error("mdb_env_create returned no handle") }
        mdb_env_set_mapsize(handle, mapSize)
        mdb_env_set_maxdbs(handle, MDB_dbi(maxDatabases))
        mdb_env_set_maxreaders(handle, UInt32(maxReaders))
        let flags = UInt32(MDB_NOTLS) | UInt32(MDB_NORDAHEAD) | (readOnly ? UInt32(MDB_RDONLY) : 0)
        // LMDB maps the data file once, at open, with the full map size; the mapping never moves. Only the
        // mapping this open creates is registered (the registry opens one at a time, so the mappings seen
        // before and after differ by this one's).
        // The data file is checked first: an unfinished one may be another process's creation, waited for
        // through `lock.mdb` (``LMDBDataFile/check(_:)``), which must never race an open here.
        let dataFile = path.appendingPathComponent("data.mdb")
        do {
            try LMDBDataFile.check(dataFile)
        } catch let damage as LMDBDataFile.Damage {
            mdb_env_close(handle)
            throw errors.damage(damage.description)
        } catch {
            mdb_env_close(handle)
            throw error
        }
        let before = ResidentMemoryReleaser.mappings(of: dataFile)
        let rc = mdb_env_open(handle, path.path, flags, 0o644)
        guard rc == 0 else {
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
        guard let identity = LMDBFileIdentity(of: dataFile) else {
            mdb_env_close(handle)
            throw errors.error("cannot open LMDB environment at \(path.path): its data file vanished while opening")
        }
        let created = ResidentMemoryReleaser.mappings(of: dataFile).filter { range in
            !before.contains { $0 == range }
        }
        self.env = handle
        self.identity = identity
        self.readOnly = readOnly
        self.mapSize = mapSize
        self.maxDatabases = maxDatabases
        self.maxReaders = maxReaders
        self.mapping = ResidentMemoryReleaser.shared.register(created)
    }

    /// Closes the handle: called by the registry once, when its last user has gone.
    func close() {
        ResidentMemoryReleaser.shared.unregister(mapping)  // before the map goes away
        mdb_env_close(env)
    }

    /// The handle of a named database, created when `create` (a writable user) and it is missing; nil when
    /// it is missing and not created.
    func database(_ name: String, create: Bool, errors: LMDBEnvironment.ErrorLabel) throws -> MDB_dbi? {
        databaseLock.lock()
        defer { databaseLock.unlock() }
        if let dbi = databases[name] { return dbi }
        var txn: OpaquePointer?
        try errors.check(mdb_txn_begin(env, nil, create ? 0 : UInt32(MDB_RDONLY), &txn), "mdb_txn_begin")
        var dbi: MDB_dbi = 0
        let rc = mdb_dbi_open(txn, name, create ? UInt32(MDB_CREATE) : 0, &dbi)
        if rc != 0 {
            mdb_txn_abort(txn)
            if rc == MDB_NOTFOUND { return nil }
            throw errors.error("mdb_dbi_open(\(name)): \(LMDBEnvironment.message(rc))")
        }
        try errors.check(mdb_txn_commit(txn), "mdb_txn_commit")
        databases[name] = dbi
        return dbi
    }
}

/// A file's identity on this machine: its device and inode, which every path to it (a symlink, `..`, a bind
/// mount) shares.
struct LMDBFileIdentity: Hashable, Sendable {
    var device: UInt64
    var inode: UInt64

    /// The identity of the file at `url` (symlinks followed), or nil when there is none.
    init?(of url: URL) {
        var info = stat()
        guard stat(url.path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}
