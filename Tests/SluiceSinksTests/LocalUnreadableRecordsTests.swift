import Foundation
import SluiceCore
import SluiceLMDB
import SluiceTesting
import Testing

@testable import SluiceSinks

/// A local store holding one record whose bytes do not decode (`LocalUnreadableRecords.swift`): vector,
/// filtered and keyword searches answer from the others and say what they skipped (in the sink's notice and in
/// the search's own log); an export and a rebuild of the keyword index go on past it, and verify's look finds it.
@Suite struct LocalUnreadableRecordsTests {
    static let record = VectorRecord.onPageOne

    @Test("searches skip a record that does not decode, name it in the sink's notice, and an export goes on past it")
    func oneDamagedRecord() async throws {
        let (sink, dir) = try await Self.threeRecords("local-unreadable")
        defer { TemporaryDirectory.remove(dir) }
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
        try await sink.exportAll { collector.append($0) }
        #expect(collector.records.map(\.id.rawValue) == ["a", "c"], "an export goes on past it")

        let found = try await sink.unreadableRecords()
        // The damaged byte is in its document key: that cannot be read either.
        #expect(found.map(\.id.rawValue) == ["b"] && found.first?.documentKey == nil, "\(found)")
        #expect(found.first?.reason.contains("not UTF-8") == true, "\(found)")
        #expect(try await sink.listIDs() == Set(["a", "b", "c"].map { VectorID(rawValue: $0) }), "ids are listed")
    }

    @Test("a search's own log names what that search skipped, and only that")
    func searchLog() async throws {
        let (sink, dir) = try await Self.threeRecords("local-unreadable-log")
        defer { TemporaryDirectory.remove(dir) }
        try Self.damage(sink, "b", "beta harbour crane", [0.9, 0.1, 0])

        let near = UnreadableRecordLog()
        let hits = try await UnreadableRecordLog.$current.withValue(near) {
            try await sink.search(SearchRequest(vector: [1, 0.05, 0], k: 2))
        }
        #expect(hits.map(\.record.id.rawValue) == ["a", "c"])
        #expect(near.records.map(\.id.rawValue) == ["b"] && near.records.first?.documentKey == "b.txt")
        let far = UnreadableRecordLog()
        let other = try await UnreadableRecordLog.$current.withValue(far) {
            try await sink.search(SearchRequest(mode: .keyword, text: "gamma", k: 1))
        }
        #expect(other.map(\.record.id.rawValue) == ["c"])
        #expect(far.records.isEmpty, "a search that met no damaged record names none: \(far.records)")
        #expect(sink.readNotice?.contains("(b)") == true, "the sink's notice still names it")
    }

    @Test("a keyword index rebuilt over a damaged record leaves it out and says so")
    func keywordRebuild() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "local-unreadable-rebuild-\(UInt64.random(in: 0...UInt64.max))"
        )
        defer { TemporaryDirectory.remove(dir) }
        do {
            let sink = try LocalSink(directory: dir)
            try await sink.prepare(embedder: EmbedderIdentity(provider: "test", model: "m", dimensions: 3))
            try await sink.upsert([
                Self.record("a", "alpha harbour crane", [1, 0, 0]),
                Self.record("b", "beta harbour crane", [0.9, 0.1, 0]),
            ])
            try await sink.finish()
            try Self.damage(sink, "b", "beta harbour crane", [0.9, 0.1, 0])
            // As a store written with an older keyword layout: the next preparation rebuilds the index.
            let meta = try sink.environment.database("meta")
            _ = try sink.environment.write { try $0.delete(meta, KeywordIndex.versionKey) }
        }
        let sink = try LocalSink(directory: dir)
        try await sink.prepare(embedder: EmbedderIdentity(provider: "test", model: "m", dimensions: 3))
        let notice = try #require(sink.readNotice, "the rebuild says what it left out")
        #expect(notice.contains("(b)"), "\(notice)")
        let keyword = try await sink.search(SearchRequest(mode: .keyword, text: "crane", k: 3))
        #expect(keyword.map(\.record.id.rawValue) == ["a"])
    }

    /// A new store in a folder named after `label` holding records a, b and c (b close to a).
    static func threeRecords(_ label: String) async throws -> (LocalSink, URL) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "\(label)-\(UInt64.random(in: 0...UInt64.max))"
        )
        let sink = try LocalSink(directory: dir)
        try await sink.upsert([
            Self.record("a", "alpha harbour crane", [1, 0, 0]),
            Self.record("b", "beta harbour crane", [0.9, 0.1, 0]),
            Self.record("c", "gamma harbour", [0, 1, 0]),
        ])
        try await sink.finish()
        return (sink, dir)
    }

    /// Damages record `id`'s text in place (its second byte, after the version byte, the key's length, the
    /// key `ID.txt`, the ordinal and the text's length): its vector and document key still read, its text is no
    /// longer UTF-8.
    static func damage(_ sink: LocalSink, _ id: String, _ text: String, _ vector: [Float]) throws {
        var damaged = LocalSink.encode(Self.record(id, text, vector))
        damaged[4 + vector.count * 4 + 1 + 1 + id.utf8.count + 4 + 1 + 1 + 1] = 0xFF
        let vectors = try sink.environment.database("vectors")
        try sink.environment.write { try $0.put(vectors, Array(id.utf8), damaged) }
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
        // Training runs on the trainer's thread: the upsert only asks for it.
        try await LocalSinkIVFTests.train(sink)
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
