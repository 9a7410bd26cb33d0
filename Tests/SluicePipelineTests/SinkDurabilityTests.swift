import Foundation
import SluiceCore
import SluiceState
import SluiceTesting
import Synchronization
import Testing

@testable import SluicePipeline

/// The checkpoint claims only what the sink made durable (docs/RELIABILITY.md, "Durable before claimed"):
/// a store that acknowledges writes before they are synced (the local store, `MDB_NOMETASYNC`) is asked to
/// make them durable before each checkpoint commit that claims them, and a power loss afterwards loses no
/// claimed vector.
@Suite struct SinkDurabilityTests {
    /// A store whose acknowledged upserts stay volatile until ``makeDurable()``: ``powerLoss()`` drops them,
    /// as a power loss drops the local store's commits that no sync covered.
    final class WriteBackSink: VectorSink {
        private struct State {
            var records: [VectorID: VectorRecord] = [:]
            var volatile: Set<VectorID> = []
            var durableCalls = 0
            var failingCall: Int?
        }

        private let state = Mutex(State())

        /// Makes the `call`-th ``makeDurable()`` (from 1) fail.
        init(failingCall: Int? = nil) {
            state.withLock { $0.failingCall = failingCall }
        }

        var name: String { "write-back:test" }
        var isRemote: Bool { false }
        var durableCalls: Int { state.withLock { $0.durableCalls } }
        var ids: Set<VectorID> { state.withLock { Set($0.records.keys) } }

        /// What is left after a power loss: the writes no ``makeDurable()`` covered are gone.
        func powerLoss() {
            state.withLock { state in
                for id in state.volatile { state.records[id] = nil }
                state.volatile = []
            }
        }

        func prepare(embedder: EmbedderIdentity) async throws {}

        func upsert(_ records: [VectorRecord]) async throws {
            state.withLock { state in
                for record in records {
                    state.records[record.id] = record
                    state.volatile.insert(record.id)
                }
            }
        }

        func makeDurable() async throws {
            try state.withLock { state in
                state.durableCalls += 1
                if state.durableCalls == state.failingCall {
                    throw SluiceError(.sinkFailed, "injected sync failure")
                }
                state.volatile = []
            }
        }

        /// Durable at once (as the local store's deletes are).
        func delete(_ ids: [VectorID]) async throws {
            state.withLock { state in
                for id in ids {
                    state.records[id] = nil
                    state.volatile.remove(id)
                }
            }
        }

        func count() async throws -> Int { state.withLock { $0.records.count } }
        func search(_ vector: [Float], k: Int) async throws -> [SearchHit] { [] }
        func exportAll(_ body: @Sendable (VectorRecord) throws -> Void) async throws {
            for record in state.withLock({ Array($0.records.values) }) { try body(record) }
        }
        func removeAll() async throws { state.withLock { $0 = State() } }
    }

    /// Each indexed document's claimed ids, from the checkpoint as `status` reads it.
    static func claimed(_ harness: PipelineHarness) throws -> [String: [VectorID]] {
        var claimed: [String: [VectorID]] = [:]
        let checkpoint = try CheckpointStore(
            directory: URL(fileURLWithPath: harness.configuration.state),
            readOnly: true
        )
        try checkpoint.forEachDocument { record in
            if record.status == .indexed { claimed[record.key] = record.chunkIDs }
        }
        return claimed
    }

    /// Every document the checkpoint claims still has all its vectors after a power loss.
    static func expectClaimsSurvive(_ harness: PipelineHarness, _ sink: WriteBackSink) throws {
        sink.powerLoss()
        let held = sink.ids
        for (key, ids) in try claimed(harness) {
            let lost = ids.filter { !held.contains($0) }
            #expect(lost.isEmpty, "\(key) is claimed indexed but lost \(lost.count) of \(ids.count) vectors")
        }
    }

    static func harness() throws -> PipelineHarness {
        try PipelineHarness { configuration in
            configuration.sink.batch = 8  // many upserts, so that commits and claims interleave
        }
    }

    /// A run's claims survive a power loss right after it: the last documents were made durable before
    /// the checkpoint claimed them.
    @Test func claimedVectorsSurviveAPowerLoss() async throws {
        let harness = try Self.harness()
        defer { harness.cleanUp() }
        let keys = try TestCorpus.writeTextDocuments(count: 40, into: harness.source)
        let sink = WriteBackSink()
        let stats = try await SinkSeamTests.pipeline(harness, sink: sink).run()
        #expect(stats.documentsUpserted == 40)
        #expect(sink.durableCalls >= 1)
        #expect(try Self.claimed(harness).count == keys.count)
        try Self.expectClaimsSurvive(harness, sink)
        #expect(sink.ids.count == stats.vectorsUpserted, "a sync covered every write of the run")
    }

    /// A sync that fails leaves the documents it was for unclaimed (the sync comes before the checkpoint
    /// commit, never after): a power loss then loses only unclaimed writes, and the next run writes them
    /// again and ends with every document claimed and held.
    @Test func aFailedSyncClaimsNothing() async throws {
        let harness = try Self.harness()
        defer { harness.cleanUp() }
        let keys = try TestCorpus.writeTextDocuments(count: 40, into: harness.source)
        let sink = WriteBackSink(failingCall: 1)
        do {
            _ = try await SinkSeamTests.pipeline(harness, sink: sink).run()
        } catch {
            // The run reports the failed commit; what counts is what the checkpoint claims.
        }
        let claimedAfterFailure = try Self.claimed(harness)
        #expect(claimedAfterFailure.count < keys.count, "the failed sync's documents are not claimed")
        try Self.expectClaimsSurvive(harness, sink)

        let stats = try await SinkSeamTests.pipeline(harness, sink: sink).run()
        #expect(stats.documentsUpserted == keys.count - claimedAfterFailure.count)
        let claimed = try Self.claimed(harness)
        #expect(claimed.count == keys.count)
        try Self.expectClaimsSurvive(harness, sink)
        #expect(sink.ids == Set(claimed.values.flatMap { $0 }))
    }
}
