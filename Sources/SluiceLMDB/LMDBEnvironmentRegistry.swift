import Foundation
import SluiceCore

/// The LMDB environments this process has open, keyed by their data file's identity (device and inode, so
/// that a symlink or a path through `..` finds the same one): a second ``LMDBEnvironment`` on a file shares
/// the first one's handle, counted, and the handle is closed when the last of them closes.
///
/// LMDB forbids opening one environment twice in a process (a second open re-initializes the lock file's
/// mutexes under a transaction holding one, and closing either drops the locks of both). Sharing follows
/// these rules:
/// - A read-only open shares a writable handle (its ``LMDBEnvironment`` refuses writes itself).
/// - A read-only open that finds no handle opens one writable when this user may write the data file and its
///   folder (LMDB writes nothing when it opens an existing file), so that a writer opened later in the
///   process (a test's run beside its reader) shares it. Only a file this user cannot write gets a
///   read-only handle, and a writable open of it while that handle is in use is refused (LMDB cannot turn a
///   handle writable; the write would fail for want of permission anyway).
/// - The map size, and the most named databases and readers, are the first open's. A later open asking for
///   a different map size gets the first one's (the map size is a ceiling on growth, and LMDB can change it
///   only while no transaction of the process is open); one asking for more named databases or readers than
///   the handle has is refused, since it would fail later, at a less clear point.
///
/// Opens and closes run under one lock, so that a data file's check, its open and the mapping it creates
/// are never interleaved with another open's.
enum LMDBEnvironmentRegistry {
    private struct Entry {
        var shared: LMDBSharedEnvironment
        var users: Int
    }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var open: [LMDBFileIdentity: Entry] = [:]

    /// The handle for the environment at `path`: this process's open one when it has one, else a new one.
    /// - Throws: the open's errors, or an error (with `errors`' code) naming the conflict when the open
    ///   handle cannot serve this open.
    static func open(
        path: URL,
        mapSize: Int,
        maxDatabases: Int,
        maxReaders: Int,
        readOnly: Bool,
        errors: LMDBEnvironment.ErrorLabel
    ) throws -> LMDBSharedEnvironment {
        lock.lock()
        defer { lock.unlock() }
        if let identity = LMDBFileIdentity(of: path.appendingPathComponent("data.mdb")),
            var entry = open[identity]
        {
            let shared = entry.shared
            if shared.readOnly && !readOnly {
                throw errors.error(
                    "cannot open \(path.path) for writing: this process has it open read-only (LMDB allows one open of an environment per process); close the read-only users first"
                )
            }
            if maxDatabases > shared.maxDatabases || maxReaders > shared.maxReaders {
                throw errors.error(
                    "cannot open \(path.path) with \(maxDatabases) named databases and \(maxReaders) readers: this process has it open with \(shared.maxDatabases) and \(shared.maxReaders) (LMDB allows one open of an environment per process)"
                )
            }
            entry.users += 1
            open[identity] = entry
            return shared
        }
        let dataFile = path.appendingPathComponent("data.mdb").path
        let writable = access(path.path, W_OK) == 0 && access(dataFile, W_OK) == 0
        let shared = try LMDBSharedEnvironment(
            path: path,
            mapSize: mapSize,
            maxDatabases: maxDatabases,
            maxReaders: maxReaders,
            readOnly: readOnly && !writable,
            errors: errors
        )
        open[shared.identity] = Entry(shared: shared, users: 1)
        return shared
    }

    /// One user of `shared` has gone; the last one closes it.
    static func release(_ shared: LMDBSharedEnvironment) {
        lock.lock()
        defer { lock.unlock() }
        guard var entry = open[shared.identity], entry.shared === shared else { return }
        entry.users -= 1
        if entry.users > 0 {
            open[shared.identity] = entry
        } else {
            open[shared.identity] = nil
            shared.close()
        }
    }

    /// How many ``LMDBEnvironment``s share the handle on the data file at `dataFile` (0: none open).
    static func users(of dataFile: URL) -> Int {
        guard let identity = LMDBFileIdentity(of: dataFile) else { return 0 }
        return lock.withLock { open[identity]?.users ?? 0 }
    }
}
