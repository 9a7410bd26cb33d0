import Foundation
import SluiceCore
import SluiceLMDB
import SluiceTesting
import Synchronization
import Testing

@testable import SluiceSinks

/// A keyword search restricted by access control on the local store ranks as if the store held only the records
/// its caller may read (`LocalKeywordAccess.swift`): BM25's corpus (records, average length) and each term's
/// document frequency count readable records only, so a score says nothing of the others, and the ranked walk reads
/// only readable records, so what it reads — its time — does not depend on unreadable records holding the query's
/// terms. Checked against a second store holding only the readable records, score for score and record for record
/// read, through writes, merges, a clear and a reopening. Behaviour only, never timing.
@Suite struct LocalSinkKeywordAccessTests {
    typealias Access = LocalSinkAccessSearchTests

    static let words = ["invoice", "total", "tax", "refund", "shipping", "date", "page", "cent", "ledger", "audit"]
    static let queries = ["invoice tax", "refund", "audit ledger total", "shipping date cent", "page"]

    /// Record `n`: a few of ``words``, readable by Alice in three of four (``LocalSinkAccessSearchTests/record(_:_:readers:)``).
    static func record(_ n: Int, readers: [String]? = nil, seed: UInt64 = 0) -> VectorRecord {
        var generator = SplitMix64(seed: UInt64(n) &* 0x9E37_79B9 &+ seed)
        let text = (0..<(2 + Int(generator.next() % 12))).map { _ in words[Int(generator.next() % 10)] }
        var record = Access.record(n, (0..<Access.dimensions).map { _ in Float(generator.next() % 1000) / 1000 + 0.01 })
        record.text = text.joined(separator: " ")
        if let readers { record.metadata["readers"] = .strings(readers) }
        return record
    }

    /// Records only Bob reads, dense in the queries' terms: long and short, so that they would move the average
    /// length and every term's document frequency.
    static func crowd(_ count: Int, from start: Int) -> [VectorRecord] {
        (0..<count).map { i in
            var record = Self.record(start + i, readers: ["bob"])
            record.text =
                Array(repeating: words[i % words.count], count: 1 + (i % 7) * 5).joined(separator: " ")
                + " invoice tax refund audit"
            return record
        }
    }

    /// The keyword searches Alice's filters make; each answer checked against a store holding only what she may
    /// read (made here from `sink`'s records), score for score, and for the records each read.
    static func expectAsIfAlone(_ sink: LocalSink, _ context: String) async throws {
        let restricted = try #require(Access.alice.filter(Access.access))
        let narrowed = try #require(
            try Access.alice.restricting(try SearchFilter(parsing: "half = even"), Access.access)
        )
        let readable = Mutex<[VectorRecord]>([])
        try await sink.exportAll { record in
            if restricted.matches(record) { readable.withLock { $0.append(record) } }
        }
        let folder = Access.folder()
        defer { TemporaryDirectory.remove(folder) }
        let alone = try await Access.open(folder)
        try await alone.upsert(readable.withLock { $0 })
        for query in queries {
            for k in [1, 5, 40] {
                for (filter, same) in [(restricted, nil), (narrowed, try SearchFilter(parsing: "half = even"))] {
                    let (found, read) = try await search(sink, query, k: k, filter)
                    let (expected, readAlone) = try await search(alone, query, k: k, same)
                    #expect(
                        found.map(\.record.id) == expected.map(\.record.id),
                        "\(context): \(query), k \(k), \(filter): \(found.map(\.record.id.rawValue)) against \(expected.map(\.record.id.rawValue))"
                    )
                    #expect(
                        found.map(\.score.bitPattern) == expected.map(\.score.bitPattern),
                        "\(context): \(query), k \(k): scores \(found.map(\.score)) against \(expected.map(\.score))"
                    )
                    #expect(
                        read == readAlone,
                        "\(context): \(query), k \(k): \(read) records read against \(readAlone)"
                    )
                }
            }
        }
        try await alone.finish()
    }

    /// A keyword search and the records its ranked walk read.
    static func search(
        _ sink: LocalSink,
        _ text: String,
        k: Int,
        _ filter: SearchFilter?
    ) async throws
        -> ([SearchHit], Int)
    {
        let before = sink.keywordRecordsRead
        let hits = try await sink.search(SearchRequest(mode: .keyword, text: text, k: k, filter: filter))
        return (hits, sink.keywordRecordsRead - before)
    }

    @Test("a restricted keyword search scores and reads as if the store held only what its caller may read")
    func crowdChangesNothing() async throws {
        let folder = Access.folder()
        defer { TemporaryDirectory.remove(folder) }
        let sink = try await Access.open(folder)
        try await sink.upsert((0..<300).map { Self.record($0) })
        try await sink.upsert(Self.crowd(200, from: 10_000))
        try await Self.expectAsIfAlone(sink, "with the crowd")
        // Unrestricted, the crowd counts: the same query scores differently (the check above can fail).
        let everyone = try await sink.search(SearchRequest(mode: .keyword, text: "invoice tax", k: 5))
        #expect(everyone.contains { $0.record.metadata["readers"] == .strings(["bob"]) })
        try await sink.finish()
    }

    @Test("readers that differ from the caller's name in their bytes alone (decomposed against composed) are not its")
    func readersComparedByBytes() async throws {
        let jose = AccessIdentity(principal: "jos\u{e9}", groups: [])
        let restricted = try #require(jose.filter(Access.access))
        func own(_ n: Int) -> VectorRecord { Self.record(n, readers: ["jos\u{e9}"]) }
        let folder = Access.folder()
        defer { TemporaryDirectory.remove(folder) }
        let sink = try await Access.open(folder)
        // The look-alike lists are written first, so that they are the first values the table meets.
        try await sink.upsert(
            Self.crowd(60, from: 10_000).map { crowd in
                var record = crowd
                record.metadata["readers"] = .strings(["jose\u{301}"])
                return record
            }
        )
        try await sink.upsert((0..<80).map(own))
        let aloneFolder = Access.folder()
        defer { TemporaryDirectory.remove(aloneFolder) }
        let alone = try await Access.open(aloneFolder)
        try await alone.upsert((0..<80).map(own))
        for query in Self.queries {
            let (found, read) = try await Self.search(sink, query, k: 10, restricted)
            let (expected, readAlone) = try await Self.search(alone, query, k: 10, nil)
            #expect(found.map(\.record.id) == expected.map(\.record.id), "\(query)")
            #expect(found.map(\.score.bitPattern) == expected.map(\.score.bitPattern), "\(query)")
            #expect(read == readAlone, "\(query)")
        }
        try await alone.finish()
        try await sink.finish()
    }

    @Test(
        "readers changed, records replaced and deleted, dead postings merged away, a clear and a reopening: the restricted ranking follows"
    )
    func writesAfterTheTable() async throws {
        let folder = Access.folder()
        defer { TemporaryDirectory.remove(folder) }
        var sink = try await Access.open(folder)
        try await sink.upsert((0..<400).map { Self.record($0) })
        try await sink.upsert(Self.crowd(100, from: 10_000))
        try await Self.expectAsIfAlone(sink, "the table made")

        // A few changes (fewer than a refresh takes): Bob's records given to Alice and hers to Bob, new records.
        try await sink.upsert(stride(from: 3, to: 40, by: 4).map { Self.record($0, readers: ["alice"]) })
        try await sink.upsert(stride(from: 0, to: 20, by: 4).map { Self.record($0, readers: ["bob"]) })
        try await sink.upsert((500..<510).map { Self.record($0) })
        var before = sink.keywordAccess.counts.withLock { $0 }
        try await Self.expectAsIfAlone(sink, "a few changes")
        var after = sink.keywordAccess.counts.withLock { $0 }
        #expect(after.broughtForward == before.broughtForward + 1 && after.made == before.made, "\(before) → \(after)")
        // Many changes: new text for half the records.
        try await sink.upsert((0..<400).filter { $0 % 2 == 1 }.map { Self.record($0, seed: 7) })
        try await Self.expectAsIfAlone(sink, "many changes")
        // Records deleted, a third of the first segment's: its rewrite drops their dead marks, so only the count of
        // live records tells the kept table that they are gone.
        let restricted = try #require(Access.alice.filter(Access.access))
        _ = try await Self.search(sink, "invoice", k: 3, restricted)
        try await sink.delete(
            (100..<250).filter { $0 % 2 == 0 }.map { VectorID(rawValue: String(format: "r%06d", $0)) }
        )
        sink.settleKeywordMerges()
        #expect(try KeywordMergesTests.deadMarks(sink) < 75)
        before = sink.keywordAccess.counts.withLock { $0 }
        try await Self.expectAsIfAlone(sink, "deletes merged away")
        after = sink.keywordAccess.counts.withLock { $0 }
        #expect(after.made == before.made + 1, "\(before) → \(after)")

        // Cleared and loaded again: record numbers start over.
        try await sink.removeAll()
        try await sink.upsert((0..<120).map { Self.record($0, seed: 3) } + Self.crowd(40, from: 20_000))
        try await Self.expectAsIfAlone(sink, "cleared and loaded again")
        try await sink.finish()
        sink = try await Access.open(folder)
        try await Self.expectAsIfAlone(sink, "reopened")
        try await sink.finish()
    }

    @Test("restricted before the keyword index is built: the scan counts only readable records")
    func scanBeforeTheIndex() async throws {
        let folder = Access.folder()
        let folderAlone = Access.folder()
        defer {
            TemporaryDirectory.remove(folder)
            TemporaryDirectory.remove(folderAlone)
        }
        let restricted = try #require(Access.alice.filter(Access.access))
        let alone = try await Access.open(folderAlone)
        do {
            let sink = try await Access.open(folder)
            try await sink.upsert((0..<150).map { Self.record($0) } + Self.crowd(60, from: 10_000))
            try await sink.finish()
            let readable = Mutex<[VectorRecord]>([])
            try await sink.exportAll { record in
                if restricted.matches(record) { readable.withLock { $0.append(record) } }
            }
            try await alone.upsert(readable.withLock { $0 })
            // As a store made before the keyword index: a read-only store ranks by a scan.
            try sink.environment.write { txn in
                _ = try txn.delete(try sink.environment.database("meta"), KeywordIndex.versionKey)
            }
        }
        var settings = LocalSink.IndexSettings(section: PipelineConfiguration.Sink())
        settings.accessField = Access.access.field
        let reader = try LocalSink(directory: folder, readOnly: true, index: settings)
        for query in Self.queries {
            let found = try await reader.search(SearchRequest(mode: .keyword, text: query, k: 10, filter: restricted))
            let expected = try await alone.search(SearchRequest(mode: .keyword, text: query, k: 10))
            #expect(!expected.isEmpty)
            #expect(found.map(\.record.id) == expected.map(\.record.id), "\(query)")
            #expect(found.map(\.score.bitPattern) == expected.map(\.score.bitPattern), "\(query)")
        }
        try await alone.finish()
    }

    @Test("numbers spanning too far for a table: the restricted search ranks by a scan, with the same answer")
    func spanTooFarScans() async throws {
        let folder = Access.folder()
        let folderAlone = Access.folder()
        defer {
            TemporaryDirectory.remove(folder)
            TemporaryDirectory.remove(folderAlone)
        }
        let sink = try await Access.open(folder)
        // 40 live records, 32 of them replaced 30 times: the live numbers span about 1,000 (16 a record is 640).
        try await sink.upsert((0..<40).map { Self.record($0) } + Self.crowd(8, from: 10_000))
        for round in 0..<30 { try await sink.upsert((0..<32).map { Self.record($0, seed: UInt64(round % 2)) }) }
        let restricted = try #require(Access.alice.filter(Access.access))
        let readable = Mutex<[VectorRecord]>([])
        try await sink.exportAll { record in
            if restricted.matches(record) { readable.withLock { $0.append(record) } }
        }
        let alone = try await Access.open(folderAlone)
        try await alone.upsert(readable.withLock { $0 })
        let tables = LocalKeywordAccess(allowance: 0)
        for query in Self.queries {
            let found = try LocalSink.keywordSearch(
                environment: sink.environment,
                query,
                k: 10,
                filter: restricted,
                access: .init(field: "readers", conditions: [restricted], tables: tables)
            )
            let expected = try await alone.search(SearchRequest(mode: .keyword, text: query, k: 10))
            #expect(!expected.isEmpty)
            #expect(found.map(\.record.id) == expected.map(\.record.id), "\(query)")
            #expect(found.map(\.score.bitPattern) == expected.map(\.score.bitPattern), "\(query)")
        }
        // No table was kept or brought forward: each search tried to make one and scanned.
        #expect(tables.counts.withLock { $0 } == .init(kept: 0, broughtForward: 0, made: Self.queries.count))
        try await alone.finish()
        try await sink.finish()
    }
}
