import Foundation
import SluiceCore
import SluiceState
import SluiceTesting
import Testing

@testable import SluicePipeline

/// The run's state writes waiting for the state's thread together share one transaction (group commit), with
/// the outcome of the same writes committed one after the other. The thread is held by the test until the
/// writes wait, so the group is deterministic.
@Suite struct CheckpointCommitsTests {
    @Test("pending ids, cached vectors and claims waiting together commit in one transaction, in order")
    func waitingWritesShareOneTransaction() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "checkpoint-commits-\(UInt64.random(in: 0...UInt64.max))"
        )
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try CheckpointStore(directory: dir)
        let executor = BlockingExecutor(label: "sl-state", threads: 1)
        defer { executor.shutdown() }
        let commits = CheckpointCommits(checkpoint: store, executor: executor)
        let embedder = EmbedderIdentity(provider: "hash", model: "m", dimensions: 2)
        let claimed = DocumentRecord(
            key: "a.txt",
            status: .indexed,
            contentHash: ContentHash(utf8: "a"),
            size: 1,
            mtimeNanoseconds: 1,
            chunkIDs: [VectorID(rawValue: "a1")]
        )

        let gate = BlockingQueue<Void>()
        let started = BlockingQueue<Void>()
        let held = Task {
            try await executor.run {
                started.append(())
                gate.take()
            }
        }
        _ = await Task.detached { started.take() }.value
        let writes: [CheckpointWrite] = [
            .markPending([
                (key: "a.txt", ids: [VectorID(rawValue: "a1")]), (key: "b.txt", ids: [VectorID(rawValue: "b1")]),
            ]),
            .cacheEmbeddings([(ContentHash(utf8: "chunk"), [0.5, 0.25])], embedder: embedder),
            .commit(put: [claimed], delete: []),  // after a's pending ids, as its claim always is
        ]
        var tasks: [Task<Void, any Error>] = []
        for (index, write) in writes.enumerated() {
            tasks.append(Task { try await commits.write(write) })
            try await waitUntil { commits.waitingCount == index + 1 }
        }
        let before = commits.transactions
        gate.append(())
        try await held.value
        for task in tasks { try await task.value }
        #expect(commits.transactions == before + 1)
        #expect(try store.document("a.txt") == claimed)  // the claim replaced the pending record
        #expect(try store.document("b.txt")?.status == .failed)  // pending only: not indexed
        #expect(try store.document("b.txt")?.pendingIDs == [VectorID(rawValue: "b1")])
        #expect(try store.cachedEmbeddings([ContentHash(utf8: "chunk")], embedder: embedder).count == 1)
    }
}
