#if os(Linux)
import Foundation
import Glibc
import SluiceCore
import Testing

@testable import SluiceLMDB

/// The check of `data.mdb` before it is mapped, against environments another process is creating.
@Suite struct LMDBDataFileTests {
    private func temporaryFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("sluice-lmdb-datafile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// The bytes of a whole data file: an environment created, written to and closed.
    private func wholeDataFile(in folder: URL) throws -> Data {
        let source = folder.appendingPathComponent("source")
        do {
            let environment = try LMDBEnvironment(path: source, mapSize: 1 << 20)
            let database = try environment.database("items")
            try environment.write { transaction in try transaction.put(database, Array("key".utf8), Array("value".utf8))
            }
        }
        return try Data(contentsOf: source.appendingPathComponent("data.mdb"))
    }

    /// Holds the write lock LMDB's creator holds on byte 0 of `lock.mdb` while it writes the meta pages
    /// (an open file description's lock, which conflicts with any other description's, in this process too).
    private func holdCreatorsLock(_ lockFile: URL) throws -> Int32 {
        let fd = open(lockFile.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        #expect(fd >= 0)
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 0
        lock.l_len = 1
        #expect(fcntl(fd, LMDBDataFile.ofdSetLock, &lock) == 0)
        return fd
    }

    /// Several runs opening one new store at once (shards do): one creates `data.mdb`, which is empty until
    /// its meta pages are written; the others must wait for it, not call the store damaged.
    @Test func aDataFileBeingCreatedIsWaitedForNotCalledEmpty() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let whole = try wholeDataFile(in: folder)
        let store = folder.appendingPathComponent("store")
        try FileManager.default.createDirectory(at: store, withIntermediateDirectories: true)
        let creator = try holdCreatorsLock(store.appendingPathComponent("lock.mdb"))
        var released = false
        // Whatever happens below, the lock is let go, or the waiting check would never return.
        defer { if !released { close(creator) } }
        let dataFile = store.appendingPathComponent("data.mdb")
        #expect(FileManager.default.createFile(atPath: dataFile.path, contents: nil))

        // The check blocks in fcntl until the creator lets go: on a thread of its own, never on the
        // cooperative pool (two threads here, which the rest of the suite needs meanwhile).
        let executor = BlockingExecutor(label: "sl-test-datafile", threads: 1)
        async let checked = executor.run { () -> String? in
            do {
                try LMDBDataFile.check(dataFile)
                return nil
            } catch {
                return "\(error)"
            }
        }
        // The checker meets the empty file while the creator holds its lock (a checker that does not wait
        // fails here), then the creator writes the meta pages and lets go.
        try await Task.sleep(for: .milliseconds(300))
        try whole.write(to: dataFile)
        close(creator)
        released = true
        let failure = try await checked
        #expect(failure == nil)
    }

    /// An empty data file nobody is creating (its creation was interrupted, or it was truncated) is damage.
    @Test func anEmptyDataFileNobodyIsCreatingIsDamage() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let dataFile = folder.appendingPathComponent("data.mdb")
        #expect(FileManager.default.createFile(atPath: dataFile.path, contents: nil))
        #expect(FileManager.default.createFile(atPath: folder.appendingPathComponent("lock.mdb").path, contents: nil))
        let damage = #expect(throws: LMDBDataFile.Damage.self) { try LMDBDataFile.check(dataFile) }
        #expect(damage?.description.contains("is empty (0 bytes)") == true)
    }

    /// A data file cut inside its meta pages while nobody holds the lock is damage too.
    @Test func aDataFileCutInsideItsMetaPagesIsDamage() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let whole = try wholeDataFile(in: folder)
        let dataFile = folder.appendingPathComponent("data.mdb")
        try whole.prefix(100).write(to: dataFile)
        let damage = #expect(throws: LMDBDataFile.Damage.self) { try LMDBDataFile.check(dataFile) }
        #expect(damage?.description.contains("too short to hold LMDB meta page 0") == true)
    }
}
#endif
