import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// A search restricted by access control on the local store reads records in the order of the graph's bounds among
/// the records its caller may read only (`LocalAccessLabels.swift`): its answer is the scan's, and what it reads —
/// so its time — does not depend on the records near the query that the caller may not see. Behaviour only, never
/// timing: what is compared is the records each search read.
@Suite struct LocalSinkAccessSearchTests {
    static let dimensions = 32

    static var access: PipelineConfiguration.Access {
        var access = PipelineConfiguration.Access()
        access.isEnabled = true
        access.field = "readers"
        return access
    }

    /// Alice, in the group `team`: she reads records naming her, `team` or everyone (`*`).
    static let alice = AccessIdentity(principal: "alice", groups: ["team"])

    static func open(_ folder: URL) async throws -> LocalSink {
        var section = PipelineConfiguration.Sink()
        section.hnsw.exactBelow = 0  // the graph answers these small stores
        var settings = LocalSink.IndexSettings(section: section)
        settings.accessField = access.field
        let sink = try LocalSink(directory: folder, index: settings)
        try await sink.prepare(embedder: EmbedderIdentity(provider: "t", model: "m", dimensions: dimensions))
        return sink
    }

    /// Record `n` with `vector`: readable by Alice in three of four (as herself, her group, everyone), and `visible`
    /// saying the same without being the access field.
    static func record(_ n: Int, _ vector: [Float], readers: [String]? = nil) -> VectorRecord {
        let readers = readers ?? [["alice"], ["team", "carol"], ["*"], ["bob"]][n % 4]
        var metadata: [String: MetadataValue] = [
            "half": n % 2 == 0 ? "even" : "odd",
            "visible": readers.contains { ["alice", "team", "*"].contains($0) } ? "yes" : "no",
            "page": .int(n),
        ]
        if n % 37 != 5 { metadata["readers"] = .strings(readers) }  // some records name no readers: none read them
        return VectorRecord(
            id: VectorID(rawValue: String(format: "r%06d", n)),
            documentKey: "doc-\(n / 10).txt",
            ordinal: n % 10,
            text: "text \(n)",
            vector: vector,
            metadata: metadata
        )
    }

    static func folder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("access-search-\(UUID().uuidString)")
    }

    /// The store's answer to `filter` (checked against the scan's, hit for hit) and the records it read, and
    /// whether the bounds answered.
    static func search(
        _ sink: LocalSink,
        _ query: [Float],
        k: Int,
        _ filter: SearchFilter,
        _ context: String
    )
        async throws -> (ids: [String], read: Int, bounded: Bool)
    {
        let before = sink.filteredSearchTally
        let found = try await sink.search(SearchRequest(vector: query, k: k, filter: filter))
        let after = sink.filteredSearchTally
        let scanned = try sink.scanSearch(query, k: k, filter: filter)
        #expect(
            found.map(\.record.id) == scanned.map(\.record.id) && found.map(\.score) == scanned.map(\.score),
            "\(context): \(filter), k \(k): \(found.map(\.record.id.rawValue)) against the scan's \(scanned.map(\.record.id.rawValue))"
        )
        return (found.map(\.record.id.rawValue), after.recordsRead - before.recordsRead, after.bounded > before.bounded)
    }

    @Test(
        "a restricted search reads the same records, and answers the same, whether or not records its caller may not see crowd the query; a filter on another field selecting the same records reads them all"
    )
    func unreadableNeighboursChangeNothing() async throws {
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 12, seed: 0xACC1)
        let vectors = generator.next(1200)
        let queries = generator.next(8)
        // Beside each query, 60 records only Bob reads, nearer to it than anything else.
        var crowd: [VectorRecord] = []
        var noise = SplitMix64(seed: 0xACC2)
        for (q, query) in queries.enumerated() {
            for i in 0..<60 {
                let near = query.map { $0 + (Float(noise.next() % 1000) / 1000 - 0.5) * 0.02 }
                crowd.append(Self.record(100_000 + q * 100 + i, near, readers: ["bob"]))
            }
        }
        let plain = Self.folder()
        let crowded = Self.folder()
        defer {
            TemporaryDirectory.remove(plain)
            TemporaryDirectory.remove(crowded)
        }
        let records = vectors.enumerated().map { Self.record($0.offset, $0.element) }
        let a = try await Self.open(plain)
        try await a.upsert(records)
        let b = try await Self.open(crowded)
        try await b.upsert(records)  // the same labels as in `a`, then the crowd's
        try await b.upsert(crowd)
        a.settleIndex()
        b.settleIndex()

        let restricted = try #require(Self.alice.filter(Self.access))
        let narrowed = try #require(try Self.alice.restricting(try SearchFilter(parsing: "half = even"), Self.access))
        let lookalike = try SearchFilter(parsing: "visible = yes")
        for (q, query) in queries.enumerated() {
            for k in [1, 10] {
                for filter in [restricted, narrowed] {
                    let plainAnswer = try await Self.search(a, query, k: k, filter, "plain, query \(q)")
                    let crowdedAnswer = try await Self.search(b, query, k: k, filter, "crowded, query \(q)")
                    #expect(plainAnswer.bounded && crowdedAnswer.bounded, "query \(q), \(filter)")
                    #expect(plainAnswer.ids == crowdedAnswer.ids, "query \(q), \(filter)")
                    #expect(
                        plainAnswer.read == crowdedAnswer.read,
                        "query \(q), k \(k), \(filter): \(plainAnswer.read) records read without the crowd, \(crowdedAnswer.read) with it"
                    )
                }
                // The same records by a field that is not access control's: the crowd is read (what the table
                // keeps the restricted search from doing).
                let plainAnswer = try await Self.search(a, query, k: k, lookalike, "plain, query \(q)")
                let crowdedAnswer = try await Self.search(b, query, k: k, lookalike, "crowded, query \(q)")
                #expect(plainAnswer.ids == crowdedAnswer.ids)
                #expect(crowdedAnswer.read >= plainAnswer.read + 60, "query \(q), k \(k)")
            }
        }
        try await a.finish()
        try await b.finish()
    }

    @Test(
        "readers changed, records deleted and added after the table was made, past the refresh and across a relabelling rebuild: the scan's answer every time"
    )
    func writesAfterTheTable() async throws {
        let folder = Self.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 12, seed: 0xACC3)
        let sink = try await Self.open(folder)
        var records = generator.next(1500).enumerated().map { Self.record($0.offset, $0.element) }
        try await sink.upsert(records)
        sink.settleIndex()
        let identities = [
            Self.alice, AccessIdentity(principal: "bob", groups: []), AccessIdentity(principal: "carol", groups: []),
            AccessIdentity(principal: nil, groups: []),
        ]
        let filters =
            try identities.map { try #require($0.filter(Self.access)) } + [
                try #require(try Self.alice.restricting(try SearchFilter(parsing: "page < 700"), Self.access))
            ]
        func expectScanAnswers(_ context: String) async throws -> Int {
            var bounded = 0
            for query in generator.next(4) {
                for filter in filters {
                    for k in [1, 10, 40] {
                        if try await Self.search(sink, query, k: k, filter, context).bounded { bounded += 1 }
                    }
                }
            }
            return bounded
        }
        #expect(try await expectScanAnswers("the table made") == 4 * filters.count * 3)

        // Fewer labels changed than the refresh takes (the table kept, the changed labels read whatever it says):
        // Bob's records handed to Alice, some records gone, new ones.
        for n in stride(from: 3, to: 120, by: 4) { records[n].metadata["readers"] = .strings(["alice"]) }
        try await sink.upsert(stride(from: 3, to: 120, by: 4).map { records[$0] })
        try await sink.delete((200..<220).map { VectorID(rawValue: String(format: "r%06d", $0)) })
        try await sink.upsert(generator.next(10).enumerated().map { Self.record(1500 + $0.offset, $0.element) })
        _ = try await expectScanAnswers("a few changes")
        // Past the refresh: Alice loses every record she read as herself.
        var lost: [VectorRecord] = []
        for n in stride(from: 0, to: 1500, by: 4) {
            records[n].metadata["readers"] = .strings(["dave"])
            lost.append(records[n])
        }
        try await sink.upsert(lost)
        _ = try await expectScanAnswers("many changes")
        sink.settleIndex()
        #expect(try await expectScanAnswers("caught up") == 4 * filters.count * 3)
        // Every label given anew: the change log cannot say what changed, so the table is made again.
        try sink.rebuildIndex()
        #expect(try await expectScanAnswers("after a rebuild") == 4 * filters.count * 3)
        try await sink.finish()
    }

    @Test("which filters a table of readers can answer: top-level conditions on the field alone")
    func restrictions() throws {
        func restriction(_ text: String) throws -> AccessRestriction {
            AccessRestriction(try SearchFilter(parsing: text), field: "readers")
        }
        #expect(try restriction("page > 3") == .none)
        #expect(try restriction("readers in (a, b)") == .conditions([try SearchFilter(parsing: "readers in (a, b)")]))
        #expect(
            try restriction("(readers in (a)) and ((page > 3) and (readers != c))")
                == .conditions([try SearchFilter(parsing: "readers in (a)"), try SearchFilter(parsing: "readers != c")])
        )
        #expect(try restriction("(readers in (a)) and ((readers = b) or (page > 3))") != .inseparable)
        #expect(try restriction("readers = a or page > 3") == .inseparable)
        #expect(AccessRestriction(try SearchFilter(parsing: "readers = a"), field: nil) == .none)
        #expect(
            AccessRestriction(try SearchFilter(parsing: "document_key = a"), field: "document_key")
                == .inseparable
        )
    }
}
