import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// The Qdrant and Pinecone sinks against their validating stand-ins: store-specific behaviour the
/// end-to-end tests do not reach (delete by document-key filter, list by id prefix, credentials).
@Suite(.serialized)
struct HTTPStoreSinkTests {
    static let identity = EmbedderIdentity(provider: "test", model: "m", dimensions: 4)

    static func records(_ key: String, count: Int) -> [VectorRecord] {
        (0..<count).map { i in
            VectorRecord(
                id: VectorID(documentKey: key, ordinal: i, chunkHash: ContentHash(utf8: "\(key) \(i)")),
                documentKey: key,
                ordinal: i,
                text: "chunk \(i) of \(key)",
                vector: [1, Float(i), 0, 0.5],
                metadata: ["tokens": "3"]
            )
        }
    }

    @Test("Qdrant: UUID point ids, batches within 64–256, delete by ids and by a document-key filter")
    func qdrant() async throws {
        let server = try await StandInServer.launch(script: "qdrant_standin.py", arguments: ["--api-key", "q-key"])
        defer { server.stop() }
        var settings = QdrantSink.Settings(url: server.baseURL, apiKey: "q-key")
        settings.collection = "unit"
        settings.batch = 1000  // clamped to 256
        let sink = QdrantSink(settings: settings)
        #expect(sink.batchSize == 256)
        try await sink.prepare(embedder: Self.identity)
        let a = Self.records("a.txt", count: 300)
        let b = Self.records("b.txt", count: 5)
        try await sink.upsert(a + b)
        #expect(try await sink.count() == 305)
        try await sink.delete([a[0].id, a[1].id])
        #expect(try await sink.count() == 303)
        try await sink.deleteDocument("a.txt")
        #expect(try await sink.count() == 5)
        #expect(try await sink.listIDs() == Set(b.map(\.id)))
        let collected = ExportCollector()
        try await sink.exportAll { collected.append($0) }
        #expect(collected.records == b.sorted { $0.id < $1.id })

        let wrongKey = QdrantSink(settings: QdrantSink.Settings(url: server.baseURL, apiKey: "nope"))
        await #expect(throws: SluiceError.self) { try await wrongKey.count() }
    }

    @Test("Pinecone: host discovered once, ids listed by document prefix, deletes need no listing when keys are known")
    func pinecone() async throws {
        let server = try await StandInServer.launch(script: "pinecone_standin.py", arguments: ["--api-key", "p-key"])
        defer { server.stop() }
        var settings = PineconeSink.Settings(apiKey: "p-key", index: "unit")
        settings.controlURL = server.baseURL
        settings.namespace = "ns"
        let sink = PineconeSink(settings: settings)
        try await sink.prepare(embedder: Self.identity)
        let a = Self.records("docs/a.txt", count: 3)
        let b = Self.records("docs/b.txt", count: 2)
        try await sink.upsert(a + b)
        #expect(try await sink.count() == 5)
        let prefixed = try await sink.listRecordIDs(prefix: "docs/a.txt#")
        #expect(Set(prefixed) == Set(a.map { PineconeSink.recordID(key: $0.documentKey, id: $0.id) }))
        try await sink.delete([b[0].id], documentKeys: [b[0].id: b[0].documentKey])
        #expect(try await sink.count() == 4)
        // Without a key, the id must have been seen in a listing.
        await #expect(throws: SluiceError.self) { try await PineconeSink(settings: settings).delete([b[1].id]) }
        let hits = try await sink.search([1, 2, 0, 0.5], k: 1)
        #expect(hits.first?.record.id == a[2].id)
        #expect(hits.first?.record.text == a[2].text)
        // Descriptions: two in prepare (before and after creating the index), one for the second sink's
        // host; none for the data-plane calls after them.
        let stats = try await Self.stats(server)
        #expect(stats["control_describes"] == 3, "\(stats)")
        #expect(stats["invalid"] == 0, "\(stats)")
    }

    static func stats(_ server: StandInServer) async throws -> [String: Int] {
        let client = StoreHTTP(
            baseURL: server.baseURL,
            headers: [],
            maxRetries: 0,
            timeout: .seconds(10),
            label: "stats"
        )
        let stats = try await client.decode([String: Int?].self, "GET", "/_standin/stats")
        return stats.compactMapValues { $0 }
    }
}

/// Collects exported records (the export callback is `@Sendable`).
final class ExportCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [VectorRecord] = []
    func append(_ record: VectorRecord) {
        lock.lock()
        stored.append(record)
        lock.unlock()
    }
    var records: [VectorRecord] {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }
}
