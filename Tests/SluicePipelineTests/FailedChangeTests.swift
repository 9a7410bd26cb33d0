import Foundation
import SluiceCore
import SluiceLMDB
import SluiceTesting
import Testing

@testable import SluicePipeline
@testable import SluiceState

/// docs/DESIGN.md §4, none stale: a document whose bytes changed and whose new version fails loses the vectors of
/// its old version; one whose bytes could not be read keeps them.
@Suite struct FailedChangeTests {
    @Test func aChangedDocumentThatFailsHasItsOldVectorsRemoved() async throws {
        let harness = try PipelineHarness()
        defer { harness.cleanUp() }
        try TestCorpus.writeTextDocuments(count: 10, into: harness.source)
        _ = try await harness.run()
        let key = "group1/doc1.txt"
        let before = try #require(try harness.record(key))
        #expect(!before.chunkIDs.isEmpty)
        #expect(harness.sink.records.contains { $0.documentKey == key })

        // The file is now binary: read, hashed, different, and rejected by the text extractor.
        try Data([0x00, 0xFF, 0x00, 0x13, 0x37] + Array(repeating: UInt8(0), count: 64)).write(
            to: harness.source.appendingPathComponent(key)
        )
        let stats = try await harness.run()
        #expect(stats.documentsFailed == 1)
        #expect(stats.vectorsDeleted == before.chunkIDs.count)
        #expect(!harness.sink.records.contains { $0.documentKey == key })
        let after = try #require(try harness.record(key))
        #expect(after.status == .failed)
        #expect(after.contentHash == nil)
        #expect(after.chunkIDs.isEmpty && after.pendingIDs.isEmpty)
        #expect(after.removedVectors == before.chunkIDs.count)
        #expect(
            [SluiceError.Code.invalidEncoding, .binaryContent].map(\.rawValue).contains(after.error?.code ?? ""),
            "\(String(describing: after.error))"
        )
        // The sink holds exactly what the checkpoint tracks.
        var tracked = Set<VectorID>()
        try CheckpointStore(directory: URL(fileURLWithPath: harness.configuration.state), readOnly: true)
            .forEachDocument { tracked.formUnion($0.knownIDs) }
        #expect(tracked == Set(harness.sink.records.map(\.id)))
        // Binary or invalid bytes cannot change while they stay the same: a dry run counts a known failure
        // (docs/DESIGN.md §11), not a retry; fixing the file indexes it again.
        let dry = try await harness.pipeline().dryRun()
        #expect(dry.retried.isEmpty && dry.knownFailures == 1)
        try "Fixed text for document one.".write(
            to: harness.source.appendingPathComponent(key),
            atomically: true,
            encoding: .utf8
        )
        let fixed = try await harness.run()
        #expect(fixed.documentsUpserted == 1)
        #expect(try harness.record(key)?.status == .indexed)
        #expect(try harness.record(key)?.removedVectors == nil)
    }

    @Test func aDocumentThatWasNotReadKeepsItsVectors() async throws {
        var harness = try PipelineHarness()
        defer { harness.cleanUp() }
        try TestCorpus.writeTextDocuments(count: 10, into: harness.source)
        _ = try await harness.run()
        let key = "group1/doc1.txt"
        let before = try #require(try harness.record(key))
        // Grown past extract.max_file_mb: it fails before a byte is read, so it is not known to differ.
        try String(repeating: "A much longer version of the document. ", count: 4_000).write(
            to: harness.source.appendingPathComponent(key),
            atomically: true,
            encoding: .utf8
        )
        harness.configuration.extract.maxFileMB = 0.1
        let stats = try await harness.run()
        #expect(stats.documentsFailed == 1)
        #expect(stats.failuresByCode["too-large"] == 1)
        #expect(stats.vectorsDeleted == 0)
        let after = try #require(try harness.record(key))
        #expect(after.status == .failed)
        #expect(after.chunkIDs == before.chunkIDs)
        #expect(after.contentHash == before.contentHash)
        #expect(after.removedVectors == nil)
        #expect(harness.sink.records.filter { $0.documentKey == key }.count == before.chunkIDs.count)
    }

    @Test func removalsPastTheMassDeleteShareKeepTheVectorsUnlessAllowed() async throws {
        let harness = try PipelineHarness()
        defer { harness.cleanUp() }
        try TestCorpus.writeTextDocuments(count: 2, into: harness.source)
        _ = try await harness.run()
        let key = "group1/doc1.txt"
        let before = try #require(try harness.record(key))
        try Data(repeating: 0, count: 128).write(to: harness.source.appendingPathComponent(key))
        // One document of two is over 20% of the vectors: kept, and the failure says why.
        let guarded = try await harness.run()
        #expect(guarded.documentsFailed == 1)
        #expect(guarded.vectorsDeleted == 0)
        let kept = try #require(try harness.record(key))
        #expect(kept.chunkIDs == before.chunkIDs)
        #expect(kept.error?.message.contains("run.max_delete_fraction") == true)
        #expect(harness.sink.records.contains { $0.documentKey == key })

        var options = RunOptions()
        options.allowMassDelete = true
        let allowed = try await harness.run(options)
        #expect(allowed.vectorsDeleted == before.chunkIDs.count)
        #expect(try harness.record(key)?.removedVectors == before.chunkIDs.count)
        #expect(!harness.sink.records.contains { $0.documentKey == key })
    }

    @Test func anUnreadableRecordStopsTheCountOfTrackedVectorsWithTheStateError() async throws {
        let harness = try PipelineHarness()
        defer { harness.cleanUp() }
        try TestCorpus.writeTextDocuments(count: 10, into: harness.source)
        _ = try await harness.run()
        let key = "group1/doc1.txt"
        var keys: [String] = []
        try CheckpointStore(directory: URL(fileURLWithPath: harness.configuration.state), readOnly: true)
            .forEachDocument { keys.append($0.key) }
        // A document gone from the source (the scan never reads its record), whose record is damaged.
        let gone = try #require(keys.first { $0 != key })
        try FileManager.default.removeItem(at: harness.source.appendingPathComponent(gone))
        do {
            let state = try CheckpointStore(directory: URL(fileURLWithPath: harness.configuration.state))
            let documents = try state.environment.database("documents")
            try state.environment.write { txn in try txn.put(documents, Array(gone.utf8), Array("{torn".utf8)) }
        }
        // A changed document that fails: removing its old vectors needs the count of tracked vectors (the
        // mass-delete share), which walks every record.
        try Data([0x00, 0xFF, 0x00, 0x13, 0x37] + Array(repeating: UInt8(0), count: 64)).write(
            to: harness.source.appendingPathComponent(key)
        )
        let error = await #expect(throws: SluiceError.self) { try await harness.run() }
        #expect(error?.code == .stateCorrupt, "\(String(describing: error))")
        #expect(error?.message.contains(gone) == true, "\(String(describing: error))")
    }
}
