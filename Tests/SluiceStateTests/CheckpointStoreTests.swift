import Foundation
import SluiceCore
import SluiceLMDB
import Testing

@testable import SluiceState

@Suite struct CheckpointStoreTests {
    func directory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("checkpoint-\(UInt64.random(in: 0...UInt64.max))")
    }

    /// The state's keys are random (documents by path, cache entries by content hash): each of its transactions
    /// checks the resident-memory budget from its first operation on, not after the interval a previous
    /// transaction left (64 in a fresh environment), which let the state's map hold 10–12 MB at the 10× load's
    /// peak against a budget of 4 MB (docs/BENCHMARKS.md, session 35). A transaction of fewer than 64
    /// operations ends with a shorter interval only if it checked.
    @Test func stateTransactionsCheckTheBudgetFromTheirFirstOperation() throws {
        let chunk = ContentHash(utf8: "chunk")
        let embedder = EmbedderIdentity(provider: "hash", model: "m", dimensions: 3)
        for transaction in ["lookup", "write"] {
            let dir = directory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let store = try CheckpointStore(directory: dir)
            let before = store.environment.nextCheckInterval
            if transaction == "lookup" {
                let hashes = [chunk, ContentHash(utf8: "other"), ContentHash(utf8: "third")]
                _ = try store.cachedEmbeddings(hashes, embedder: embedder)
            } else {
                try store.cacheEmbeddings([(chunk, [1, 2, 3])], embedder: embedder)
            }
            #expect(before == 64)
            #expect(store.environment.nextCheckInterval < 64, "\(transaction)")
        }
    }

    @Test func documentsRoundTripAndPendingIdsMerge() throws {
        let dir = directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try CheckpointStore(directory: dir)
        let ids = [VectorID(rawValue: "a"), VectorID(rawValue: "b")]
        let record = DocumentRecord(
            key: "x.txt",
            status: .indexed,
            contentHash: ContentHash(utf8: "x"),
            size: 3,
            mtimeNanoseconds: 42,
            chunkIDs: ids
        )
        try store.commit(put: [record])
        #expect(try store.document("x.txt") == record)
        try store.markPending([
            (key: "x.txt", ids: [VectorID(rawValue: "c")]), (key: "new.txt", ids: [VectorID(rawValue: "d")]),
        ])
        #expect(try store.document("x.txt")?.pendingIDs == [VectorID(rawValue: "c")])
        #expect(try store.document("x.txt")?.knownIDs == Set(["a", "b", "c"].map(VectorID.init(rawValue:))))
        // A document first seen in a crashed attempt is not "indexed".
        #expect(try store.document("new.txt")?.status == .failed)
        try store.commit(put: [], delete: ["new.txt"])
        #expect(try store.document("new.txt") == nil)
        #expect(try store.documentCount() == 1)
    }

    @Test func longKeysAreStoredAndFound() throws {
        let dir = directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try CheckpointStore(directory: dir)
        let key = String(repeating: "deep/folder/", count: 80) + "file.txt"
        try store.commit(put: [
            DocumentRecord(key: key, status: .indexed, contentHash: nil, size: 1, mtimeNanoseconds: 1)
        ])
        #expect(try store.document(key)?.key == key)
    }

    @Test func embeddingCacheIsKeyedByEmbedderAndChunk() throws {
        let dir = directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try CheckpointStore(directory: dir)
        let a = EmbedderIdentity(provider: "hash", model: "m", dimensions: 3)
        let b = EmbedderIdentity(provider: "hash", model: "m", dimensions: 4)
        let chunk = ContentHash(utf8: "text")
        try store.cacheEmbeddings([(chunk, [1, 2, 3])], embedder: a)
        #expect(try store.cachedEmbeddings([chunk], embedder: a)[chunk] == [1, 2, 3])
        #expect(try store.cachedEmbeddings([chunk], embedder: b).isEmpty)
    }

    @Test func reopeningKeepsEverything() throws {
        let dir = directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        do {
            let store = try CheckpointStore(directory: dir)
            try store.setMetadata("embedder", "hash/x@3")
            try store.saveRun(RunRecord(runID: "r1", startedAt: 1, configurationHash: "c"))
        }
        let reopened = try CheckpointStore(directory: dir, readOnly: true)
        #expect(try reopened.metadata("embedder") == "hash/x@3")
        #expect(try reopened.recentRuns(limit: 5).map(\.runID) == ["r1"])
    }

    @Test func theLockIsExclusiveAndReleased() throws {
        let dir = directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var first: StateLock? = try StateLock(directory: dir)
        #expect(throws: SluiceError.self) { _ = try StateLock(directory: dir) }
        first = nil
        _ = first
        let again = try StateLock(directory: dir)
        withExtendedLifetime(again) {}
    }
}
