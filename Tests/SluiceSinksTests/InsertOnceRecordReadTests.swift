import Foundation
import SluiceCore
import SluiceSinks
import SluiceTesting
import Synchronization
import Testing

/// `sluice serve` reads the deployment's manifest once a second, and an ``InsertOnceRecordStore`` keeps every
/// version of it: a read asks only for the highest version seen before and newer ones (one record while nothing
/// changed), and every version of the key again when none of those is there (after a drop of everything).
@Suite struct InsertOnceRecordReadTests {
    /// An ``InsertOnceRecordStore`` in memory that counts the records its reads return.
    final class CountingStore: InsertOnceRecordStore {
        let records = Mutex<[String: VersionedGenerationRecord]>([:])
        let read = Mutex(0)
        let location = "counting \(UUID().uuidString)"
        var seenVersions: SeenRecordVersions { .of(location) }

        func insertIfAbsent(_ record: VersionedGenerationRecord) async throws {
            records.withLock { if $0[record.id] == nil { $0[record.id] = record } }
        }

        func versionedRecord(id: String) async throws -> VersionedGenerationRecord? {
            records.withLock { $0[id] }
        }

        func allVersionedRecords() async throws -> [VersionedGenerationRecord] {
            counted(records.withLock { Array($0.values) })
        }

        func versionedRecords(of key: String, from version: Int) async throws -> [VersionedGenerationRecord] {
            counted(records.withLock { $0.values.filter { $0.key == key && $0.version >= version } })
        }

        func deleteVersionedRecords(ids: [String]) async throws {
            records.withLock { for id in ids { $0[id] = nil } }
        }

        private func counted(_ found: [VersionedGenerationRecord]) -> [VersionedGenerationRecord] {
            read.withLock { $0 += found.count }
            return found
        }

        /// The records every read so far returned.
        var recordsRead: Int { read.withLock { $0 } }
    }

    static func data(_ text: String) -> Data { Data(text.utf8) }

    @Test("a read of the manifest returns the versions from the one seen last: one record while nothing changed")
    func readsFromTheVersionSeen() async throws {
        let store = CountingStore()
        for version in 0..<4 {
            #expect(try await store.writeSharedRecord("manifest", Self.data("m\(version + 1)"), expecting: version))
        }
        for shard in 0..<3 {
            _ = try await store.writeSharedRecord("parts/g2/\(shard)-of-3", Self.data("p\(shard)"), expecting: nil)
        }
        #expect(try await store.sharedRecord("manifest") == SharedGenerationRecord(value: Self.data("m4"), version: 4))
        var before = store.recordsRead
        #expect(try await store.sharedRecord("manifest")?.version == 4)
        let unchanged = store.recordsRead - before
        #expect(unchanged == 1, "a read with nothing changed returned \(unchanged) records, not the one seen")
        #expect(try await store.writeSharedRecord("manifest", Self.data("m5"), expecting: 4))
        before = store.recordsRead
        #expect(try await store.sharedRecord("manifest") == SharedGenerationRecord(value: Self.data("m5"), version: 5))
        let changed = store.recordsRead - before
        #expect(changed == 2, "versions 4 and 5, nothing else: \(changed)")
    }

    @Test("after every record is deleted, a new manifest from version 1 is read (the versions seen are gone)")
    func followsADropOfEverything() async throws {
        let store = CountingStore()
        for version in 0..<3 {
            #expect(try await store.writeSharedRecord("manifest", Self.data("old\(version + 1)"), expecting: version))
        }
        #expect(try await store.sharedRecord("manifest")?.version == 3)
        try await store.deleteSharedRecords(prefix: "")
        #expect(try await store.sharedRecord("manifest") == nil)
        #expect(try await store.writeSharedRecord("manifest", Self.data("new1"), expecting: 0))
        #expect(
            try await store.sharedRecord("manifest") == SharedGenerationRecord(value: Self.data("new1"), version: 1)
        )
        // Dropped and rewritten between two reads: the version seen (3) is gone, version 1 is found.
        #expect(try await store.writeSharedRecord("manifest", Self.data("new2"), expecting: 1))
        #expect(try await store.writeSharedRecord("manifest", Self.data("new3"), expecting: 2))
        #expect(try await store.sharedRecord("manifest")?.version == 3)
        try await store.deleteSharedRecords(prefix: "")
        #expect(try await store.writeSharedRecord("manifest", Self.data("again"), expecting: 0))
        #expect(
            try await store.sharedRecord("manifest") == SharedGenerationRecord(value: Self.data("again"), version: 1)
        )
    }

    /// The stores that keep generation records insert-once: real Chroma, the Qdrant stand-in.
    enum Store: String, CaseIterable, Sendable { case chroma, qdrant }

    /// A sink of `collection` on `url`.
    static func sink(_ store: Store, _ url: String, collection: String = "docs") -> any InsertOnceRecordStore {
        switch store {
        case .chroma:
            var settings = ChromaSink.Settings(url: url, apiKey: nil)
            settings.collection = collection
            return ChromaSink(settings: settings)
        case .qdrant:
            var settings = QdrantSink.Settings(url: url, apiKey: nil)
            settings.collection = collection
            return QdrantSink(settings: settings)
        }
    }

    @Test(
        "every sink of one store shares the versions read (serve makes a new sink for each poll); another's is its own",
        arguments: Store.allCases
    )
    func sinksOfOneStoreShareTheVersionsSeen(_ kind: Store) {
        let url = "http://127.0.0.1:9"
        #expect(Self.sink(kind, url).seenVersions === Self.sink(kind, url).seenVersions)
        #expect(Self.sink(kind, url).seenVersions !== Self.sink(kind, url, collection: "other").seenVersions)
        #expect(Self.sink(kind, url).seenVersions !== Self.sink(kind, "http://127.0.0.1:10").seenVersions)
    }

    static func launch(_ store: Store, _ folder: URL) async throws -> StandInServer {
        switch store {
        case .chroma: try await StandInServer.launch(script: "chroma_server.py", arguments: [folder.path])
        case .qdrant: try await StandInServer.launch(script: "qdrant_standin.py")
        }
    }

    @Test(
        "the store's own filter: one key's versions from a version, and a switch followed after a drop",
        arguments: Store.allCases
    )
    func storeFilter(_ kind: Store) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sluice-records-\(kind.rawValue)-\(UInt32.random(in: 0...UInt32.max))"
        )
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { TemporaryDirectory.remove(folder) }
        let server = try await Self.launch(kind, folder)
        defer { server.stop() }
        let store = Self.sink(kind, server.baseURL)
        for version in 0..<4 {
            #expect(try await store.writeSharedRecord("manifest", Self.data("m\(version + 1)"), expecting: version))
        }
        _ = try await store.writeSharedRecord("parts/g2/0-of-2", Self.data("p0"), expecting: nil)
        _ = try await store.writeSharedRecord("manifest-like", Self.data("x"), expecting: nil)
        let fromThree = try await store.versionedRecords(of: "manifest", from: 3)
        #expect(fromThree.map(\.version).sorted() == [3, 4], "\(fromThree)")
        #expect(fromThree.allSatisfy { $0.key == "manifest" })
        #expect(try await store.versionedRecords(of: "manifest", from: 5).isEmpty)
        // Each read with a new sink, as `sluice serve`'s poll makes them.
        #expect(try await Self.sink(kind, server.baseURL).sharedRecord("manifest")?.value == Self.data("m4"))
        #expect(try await store.writeSharedRecord("manifest", Self.data("m5"), expecting: 4))
        #expect(try await Self.sink(kind, server.baseURL).sharedRecord("manifest")?.value == Self.data("m5"))
        try await store.deleteSharedRecords(prefix: "")
        #expect(try await store.writeSharedRecord("manifest", Self.data("fresh"), expecting: 0))
        #expect(
            try await Self.sink(kind, server.baseURL).sharedRecord("manifest")
                == SharedGenerationRecord(value: Self.data("fresh"), version: 1)
        )
    }
}
