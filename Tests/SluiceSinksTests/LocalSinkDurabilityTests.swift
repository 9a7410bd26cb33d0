import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// The local store acknowledges an upsert once it committed (`MDB_NOMETASYNC`: its meta page not yet synced)
/// and syncs when asked (`makeDurable()`), before the checkpoint claims it; deletes are synced at once
/// (docs/RELIABILITY.md, "Durable before claimed").
@Suite struct LocalSinkDurabilityTests {
    static func record(_ id: String, ordinal: Int) -> VectorRecord {
        VectorRecord(
            id: VectorID(rawValue: id),
            documentKey: "doc-\(ordinal / 4).txt",
            ordinal: ordinal,
            text: "text \(id)",
            vector: [Float(ordinal % 7) + 1, 1, Float(ordinal % 3)],
            metadata: [:]
        )
    }

    /// An upsert's newest commit waits for a sync (each commit's own sync covers the one before); one
    /// `makeDurable()` covers it, and another with nothing new to cover has nothing to do. What was committed reads back from a second opening of the store.
    @Test func upsertsWaitForOneSync() async throws {
        let directory = try TemporaryDirectory.make("local-durability")
        defer { TemporaryDirectory.remove(directory) }
        do {
            // Four pages a commit: 12 records of 3 documents (a page each) make three commits.
            let sink = try LocalSink(directory: directory, commitPages: 4)
            try await sink.prepare(embedder: EmbedderIdentity(provider: "test", model: "m", dimensions: 3))
            try await sink.upsert((0..<12).map { Self.record("a\($0)", ordinal: $0) })
            // Each commit's own data sync flushed the meta page of the one before: only the newest waits.
            #expect(sink.syncLedger.pending == 1, "only the newest commit's meta page waits for a sync")
            try await sink.upsert((12..<16).map { Self.record("a\($0)", ordinal: $0) })
            #expect(sink.syncLedger.pending == 1)
            try await sink.makeDurable()
            #expect(sink.syncLedger.pending == 0)
            #expect(sink.syncLedger.unsynced() == nil, "nothing left for the next makeDurable() to sync")
            try await sink.makeDurable()
            #expect(sink.syncLedger.pending == 0)
            // Deletes are synced at once: they leave nothing for makeDurable() either.
            try await sink.delete([VectorID(rawValue: "a0")])
            #expect(sink.syncLedger.pending == 0)
            try await sink.finish()
        }
        let reopened = try LocalSink(directory: directory, readOnly: true)
        #expect(try await reopened.count() == 15)
    }
}
