import Foundation
import SluiceCore
import SluiceLMDB
import SluiceTesting
import Testing

@testable import SluiceSinks

/// A local store holding one record whose bytes do not decode (`LocalUnreadableRecords.swift`): vector,
/// filtered and keyword searches answer from the others and say what they skipped; an export stops at it,
/// naming it.
@Suite struct LocalUnreadableRecordsTests {
    static let record = VectorRecord.onPageOne

    @Test("searches skip a record that does not decode, name it in the sink's notice, and export refuses it")
    func oneDamagedRecord() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "local-unreadable-\(UInt64.random(in: 0...UInt64.max))"
        )
        defer { TemporaryDirectory.remove(dir) }
        let sink = try LocalSink(directory: dir)
        try await sink.upsert([
            Self.record("a", "alpha harbour crane", [1, 0, 0]),
            Self.record("b", "beta harbour crane", [0.9, 0.1, 0]),
            Self.record("c", "gamma harbour", [0, 1, 0]),
        ])
        try await sink.finish()
        #expect(sink.readNotice == nil)
        // Record b's fields damaged in place: its vector still scores, its text is no longer UTF-8.
        var damaged = LocalSink.encode(Self.record("b", "beta harbour crane", [0.9, 0.1, 0]))
        damaged[4 + 3 * 4 + 3] = 0xFF
        let vectors = try sink.environment.database("vectors")
        try sink.environment.write { try $0.put(vectors, Array("b".utf8), damaged) }

        let nearest = try await sink.search(SearchRequest(vector: [1, 0.05, 0], k: 2))
        #expect(nearest.map(\.record.id.rawValue) == ["a", "c"])
        let filtered = try await sink.search(
            SearchRequest(vector: [1, 0.05, 0], k: 3, filter: try SearchFilter(parsing: "page = 1"))
        )
        #expect(filtered.map(\.record.id.rawValue) == ["a", "c"])
        let keyword = try await sink.search(SearchRequest(mode: .keyword, text: "crane harbour", k: 3))
        #expect(keyword.map(\.record.id.rawValue) == ["a", "c"])
        let notice = try #require(sink.readNotice)
        #expect(notice.contains("skipped 1 record(s)") && notice.contains("(b)"), "\(notice)")
        #expect(notice.contains("corrupt record b in the local store"), "\(notice)")

        let collector = ExportCollector()
        let error = await #expect(throws: SluiceError.self) { try await sink.exportAll { collector.append($0) } }
        #expect(error?.message.contains("corrupt record b") == true)
    }

    @Test("an IVF search skips a record that does not decode and answers with the next best")
    func damagedRecordUnderIVF() async throws {
        let folder = LocalSinkIVFTests.folder()
        defer { TemporaryDirectory.remove(folder) }
        let dimensions = LocalSinkIVFTests.dimensions
        var generator = ClusteredVectors(dimensions: dimensions, clusters: 4, seed: 0xDA3)
        let vectors = generator.next(200)
        // nprobe 1,000: every list is scanned, so the answer must equal the scan's.
        let sink = try LocalSinkIVFTests.open(folder, exactBelow: 100, nprobe: 1_000)
        try await LocalSinkIVFTests.prepare(sink, dimensions: dimensions)
        try await sink.upsert(LocalSinkIVFTests.records(vectors))
        #expect(try LocalSinkIVFTests.current(sink) != nil, "the lists were trained")

        let query = vectors[7]
        let before = try await sink.search(query, k: 4).map(\.record.id.rawValue)
        let victim = try #require(before.first)
        let record = try #require(LocalSinkIVFTests.records(vectors).first { $0.id.rawValue == victim })
        var damaged = LocalSink.encode(record)
        damaged[4 + dimensions * 4 + 3] = 0xFF
        let stored = try sink.environment.database("vectors")
        try sink.environment.write { try $0.put(stored, Array(victim.utf8), damaged) }

        let after = try await sink.search(query, k: 3).map(\.record.id.rawValue)
        #expect(after == Array(before.dropFirst()), "before \(before), after \(after)")
        let notice = try #require(sink.readNotice)
        #expect(notice.contains("(\(victim))"), "\(notice)")
    }
}
