import Foundation
import SluiceCore
import SluiceTesting
import Synchronization
import Testing

@testable import SluiceSinks

@Suite struct LocalSinkTests {
    func record(_ id: String, _ vector: [Float], key: String = "doc.txt", ordinal: Int = 0) -> VectorRecord {
        VectorRecord(
            id: VectorID(rawValue: id),
            documentKey: key,
            ordinal: ordinal,
            text: "text \(id)",
            vector: vector,
            metadata: ["page": "1"]
        )
    }

    func makeSink() throws -> (LocalSink, URL) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "local-sink-\(UInt64.random(in: 0...UInt64.max))"
        )
        return (try LocalSink(directory: dir), dir)
    }

    @Test("a full local store fails as the sink's error (sink-failed, naming the store), not as the state's")
    func fullStoreIsTheSinksFailure() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "local-sink-full-\(UInt64.random(in: 0...UInt64.max))"
        )
        defer { TemporaryDirectory.remove(dir) }
        let sink = try LocalSink(directory: dir, mapSize: 1 << 20)
        try await sink.prepare(embedder: EmbedderIdentity(provider: "t", model: "m", dimensions: 1024))
        let records = (0..<400).map { record(String(format: "%032x", $0), [Float](repeating: 0.5, count: 1024)) }
        do {
            try await sink.upsert(records)
            Issue.record("400 KiB-vectors fit in a 1 MiB map")
        } catch let error as SluiceError {
            #expect(error.code == .sinkFailed, "\(error)")
            #expect(error.message.contains("local store"), "\(error)")
        }
    }

    @Test func upsertIsIdempotentAndDeleteRemoves() async throws {
        let (sink, dir) = try makeSink()
        defer { TemporaryDirectory.remove(dir) }
        try await sink.prepare(embedder: EmbedderIdentity(provider: "t", model: "m", dimensions: 2))
        try await sink.upsert([record("b", [0, 1]), record("a", [1, 0])])
        try await sink.upsert([record("a", [1, 0])])
        #expect(try await sink.count() == 2)
        try await sink.delete([VectorID(rawValue: "a"), VectorID(rawValue: "missing")])
        #expect(try await sink.count() == 1)
    }

    @Test func searchRanksByCosineAndExportIsSortedById() async throws {
        let (sink, dir) = try makeSink()
        defer { TemporaryDirectory.remove(dir) }
        try await sink.upsert([record("c", [0, 1]), record("a", [1, 0]), record("b", [0.7, 0.7])])
        let hits = try await sink.search([1, 0.1], k: 2)
        #expect(hits.map(\.record.id.rawValue) == ["a", "b"])
        #expect(hits[0].record.metadata["page"] == "1")
        let ids = Mutex<[String]>([])
        try await sink.exportAll { record in ids.withLock { $0.append(record.id.rawValue) } }
        #expect(ids.withLock { $0 } == ["a", "b", "c"])
    }

    @Test func refusesVectorsOfAnotherEmbedder() async throws {
        let (sink, dir) = try makeSink()
        defer { TemporaryDirectory.remove(dir) }
        try await sink.prepare(embedder: EmbedderIdentity(provider: "t", model: "m", dimensions: 2))
        try await sink.upsert([record("a", [1, 0])])
        await #expect(throws: SluiceError.self) {
            try await sink.prepare(embedder: EmbedderIdentity(provider: "t", model: "other", dimensions: 2))
        }
        try await sink.removeAll()
        try await sink.prepare(embedder: EmbedderIdentity(provider: "t", model: "other", dimensions: 2))
    }
}
