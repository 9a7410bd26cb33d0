#if os(Linux)
import Dispatch
import Foundation
import SluiceCore
import Synchronization
import Testing

@testable import SluiceLMDB

/// One LMDB handle per data file in the process (``LMDBEnvironmentRegistry``): a second open, by any path,
/// shares the first one's, and the last close closes it.
@Suite struct LMDBEnvironmentRegistryTests {
    /// A new folder `root` holding `store/`, a symlink `link` to it and an empty `sub/` (for `sub/../store`).
    private func folders() throws -> (root: URL, store: URL, link: URL, dotted: URL) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lmdb-registry-\(UInt64.random(in: 0...UInt64.max))"
        )
        .resolvingSymlinksInPath()
        let store = root.appendingPathComponent("store")
        try FileManager.default.createDirectory(at: store, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("sub"),
            withIntermediateDirectories: true
        )
        let link = root.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: store)
        return (root, store, link, URL(fileURLWithPath: root.path + "/sub/../store"))
    }

    private static func bytes(_ value: Int) -> [UInt8] { Array(String(value).utf8) }
    private static func int(_ bytes: [UInt8]?) -> Int? { bytes.flatMap { Int(String(decoding: $0, as: UTF8.self)) } }

    @Test("two opens of one store by two paths share one handle; a writer and a reader in each agree")
    func twoPathsShareOneHandle() throws {
        let (root, store, link, dotted) = try folders()
        defer { try? FileManager.default.removeItem(at: root) }
        let dataFile = store.appendingPathComponent("data.mdb")
        var first: LMDBEnvironment? = try LMDBEnvironment(path: store, mapSize: 1 << 24)
        var second: LMDBEnvironment? = try LMDBEnvironment(path: link, mapSize: 1 << 22)
        var third: LMDBEnvironment? = try LMDBEnvironment(path: dotted, mapSize: 1 << 24, readOnly: true)
        #expect(first!.sharesHandle(with: second!))
        #expect(first!.sharesHandle(with: third!))
        #expect(LMDBEnvironmentRegistry.users(of: dataFile) == 3)
        #expect(ResidentMemoryReleaser.mappings(of: dataFile).count == 1, "the file is mapped once")

        // Writer w (0 through `first`, 1 through `second`) commits, in each transaction, the key `w:n` and
        // its counter `count:w` = n. A reader that sees `count:w` = n must see `w:n` (one snapshot), and
        // the counters it sees never go back.
        let rounds = 150
        let table = try first!.database("t")
        #expect(try second!.database("t") == table)
        do {
            let writers = [first!, second!]
            let readers = [first!, third!]
            let failures = Mutex<[String]>([])
            let writing = Atomic<Int>(2)
            DispatchQueue.concurrentPerform(iterations: 4) { worker in
                do {
                    if worker < 2 {
                        defer { writing.subtract(1, ordering: .sequentiallyConsistent) }
                        let environment = writers[worker]
                        for n in 1...rounds {
                            try environment.write { txn in
                                try txn.put(table, Array("\(worker):\(n)".utf8), Self.bytes(n))
                                try txn.put(table, Array("count:\(worker)".utf8), Self.bytes(n))
                            }
                        }
                    } else {
                        let environment = readers[worker - 2]
                        var seen = [0, 0]
                        var reads = 0
                        while writing.load(ordering: .sequentiallyConsistent) > 0 || reads < 10 {
                            reads += 1
                            try environment.read { txn in
                                for w in 0..<2 {
                                    let count = Self.int(try txn.get(table, Array("count:\(w)".utf8))) ?? 0
                                    if count < seen[w] { failures.withLock { $0.append("count \(w) went back") } }
                                    seen[w] = count
                                    if count > 0, try txn.get(table, Array("\(w):\(count)".utf8)) == nil {
                                        failures.withLock { $0.append("count \(w) = \(count) without its key") }
                                    }
                                }
                            }
                        }
                    }
                } catch {
                    writing.store(0, ordering: .sequentiallyConsistent)
                    failures.withLock { $0.append("worker \(worker): \(error)") }
                }
            }
            #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 }.prefix(5))")
            for environment in [first!, second!, third!] {
                let (counts, entries) = try environment.read { txn in
                    (
                        [
                            Self.int(try txn.get(table, Array("count:0".utf8))),
                            Self.int(try txn.get(table, Array("count:1".utf8))),
                        ],
                        try txn.count(table)
                    )
                }
                #expect(counts == [rounds, rounds])
                #expect(entries == 2 * rounds + 2)
            }
        }
        // The read-only open shares a writable handle but still only reads.
        #expect(throws: SluiceError.self) { try third!.write { _ in } }

        // The last user closes the handle (its map goes away); until then it stays open.
        first = nil
        second = nil
        #expect(LMDBEnvironmentRegistry.users(of: dataFile) == 1)
        #expect(ResidentMemoryReleaser.mappings(of: dataFile).count == 1)
        #expect(try third!.read { try $0.count(table) } == 2 * rounds + 2)
        third = nil
        #expect(LMDBEnvironmentRegistry.users(of: dataFile) == 0)
        #expect(ResidentMemoryReleaser.mappings(of: dataFile).isEmpty, "the last close unmaps the file")
        #expect(first == nil && second == nil && third == nil)

        // And it opens again afresh.
        let again = try LMDBEnvironment(path: link, mapSize: 1 << 24, readOnly: true)
        let reopened = try again.database("t")
        #expect(try again.read { try $0.count(reopened) } == 2 * rounds + 2)
    }

    @Test("a writer opened after a reader shares its handle; an open asking for more than the handle has is refused")
    func aWriterAfterAReaderShares() throws {
        let (root, store, link, _) = try folders()
        defer { try? FileManager.default.removeItem(at: root) }
        do { _ = try LMDBEnvironment(path: store, mapSize: 1 << 20).database("t") }
        let reader = try LMDBEnvironment(path: store, mapSize: 1 << 20, readOnly: true)
        let table = try reader.database("t")
        let writer = try LMDBEnvironment(path: link, mapSize: 1 << 20, errors: .init(owner: "the test store"))
        #expect(writer.sharesHandle(with: reader))
        try writer.write { try $0.put(table, Array("k".utf8), Array("v".utf8)) }
        #expect(try reader.read { try $0.get(table, Array("k".utf8)) } == Array("v".utf8))
        let refused = #expect(throws: SluiceError.self) { try reader.write { _ in } }
        #expect(refused?.message.contains("the test store") == false)
        // More named databases than the open handle has would fail later: refused now, with why.
        let error = #expect(throws: SluiceError.self) {
            _ = try LMDBEnvironment(
                path: link,
                mapSize: 1 << 20,
                maxDatabases: 64,
                readOnly: true,
                errors: .init(owner: "the test store")
            )
        }
        #expect(error?.message.contains("the test store") == true)
        #expect(error?.message.contains("LMDB allows one open of an environment per process") == true)
    }
}
#endif
