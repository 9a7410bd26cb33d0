import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// A keyword search restricted by access control on pgvector ranks as if the table held only the rows its caller
/// may read (PgvectorSink+Keyword, +KeywordLengths), against a real PostgreSQL 18 + pgvector: each word's document
/// frequency, the row count and the average length are the readable rows', so the scores are those of a table
/// holding only them, to the bit — through updates, deletes, a run's fold of the sums, and a table whose sums are
/// not kept by the field (counted by a scan then).
@Suite(.serialized)
struct PgvectorKeywordAccessTests {
    typealias Access = LocalSinkAccessSearchTests

    static let words = ["invoice", "total", "tax", "refund", "shipping", "date", "ledger", "audit"]
    static let queries = ["invoice tax", "refund", "audit ledger total", "shipping date"]

    /// Row `n`: a few of ``words``; readable by Alice in three of four, as ``LocalSinkAccessSearchTests`` has it.
    static func record(_ n: Int, readers: [String]? = nil) -> VectorRecord {
        var generator = SplitMix64(seed: UInt64(n) &* 0x9E37_79B9)
        let text = (0..<(2 + Int(generator.next() % 9))).map { _ in words[Int(generator.next() % 8)] }
        var record = PgvectorKeywordTests.record(n, text.joined(separator: " "))
        record.metadata["readers"] = .strings(readers ?? [["alice"], ["team", "carol"], ["*"], ["bob"]][n % 4])
        if n % 37 == 5 { record.metadata["readers"] = nil }  // names no readers: nobody restricted reads it
        return record
    }

    /// Rows only Bob reads, dense in the queries' words, long and short.
    static func crowd(_ count: Int, from start: Int) -> [VectorRecord] {
        (0..<count).map { i in
            var record = Self.record(start + i, readers: ["bob"])
            record.text =
                Array(repeating: words[i % words.count], count: 1 + (i % 5) * 4).joined(separator: " ")
                + " invoice tax refund audit"
            return record
        }
    }

    static func settings(_ postgres: PostgresForTest, _ table: String, access: Bool = true) -> PgvectorSink.Settings {
        var settings = postgres.settings(table: table)
        settings.accessField = access ? "readers" : nil
        return settings
    }

    /// Alice's keyword searches on `sink` against the same on a fresh table holding only the rows of `rows` she may
    /// read: the same rows, the same scores.
    static func expectAsIfAlone(
        _ sink: PgvectorSink,
        rows: [VectorRecord],
        _ postgres: PostgresForTest,
        table: String,
        _ context: String
    ) async throws {
        let restricted = try #require(Access.alice.filter(Access.access))
        let alone = try await PgvectorKeywordTests.sink(
            Self.settings(postgres, table),
            holding: rows.filter { restricted.matches($0) }
        )
        for query in queries {
            for k in [1, 5, 30] {
                let found = try await sink.search(SearchRequest(mode: .keyword, text: query, k: k, filter: restricted))
                let expected = try await alone.search(
                    SearchRequest(mode: .keyword, text: query, k: k, filter: restricted)
                )
                #expect(!expected.isEmpty, "\(context): \(query)")
                #expect(
                    found.map(\.record.id) == expected.map(\.record.id),
                    "\(context): \(query), k \(k): \(PgvectorKeywordTests.ids(found)) against \(PgvectorKeywordTests.ids(expected))"
                )
                #expect(
                    found.map(\.score.bitPattern) == expected.map(\.score.bitPattern),
                    "\(context): \(query), k \(k): \(found.map(\.score)) against \(expected.map(\.score))"
                )
            }
        }
    }

    /// The sums by readers list against a scan of the table grouped the same way.
    static func expectSumsByReaders(_ sink: PgvectorSink, _ table: String) async throws {
        let (scan, sums) = try await sink.withConnection("sums") { connection in
            (
                try connection.query(
                    """
                    SELECT coalesce(metadata->'readers', 'null')::text, sum(length(text_search))::text, count(*)::text
                    FROM \(table) GROUP BY 1 ORDER BY 1
                    """
                ).map { $0.map { $0 ?? "" } },
                try connection.query(
                    """
                    SELECT coalesce(readers, 'null')::text, sum(lexemes)::text, sum(chunks)::text
                    FROM \(table)_keyword_lengths GROUP BY 1 HAVING sum(chunks) <> 0 ORDER BY 1
                    """
                ).map { $0.map { $0 ?? "" } }
            )
        }
        #expect(sums == scan)
    }

    @Test("the sums' readers lists are indexed, and a caller's names find its lists' rows through the index")
    func readersIndexed() async throws {
        let postgres = try await PostgresForTest.launch()
        defer { postgres.stop() }
        let rows = (0..<160).map { Self.record($0) } + Self.crowd(80, from: 1000)
        let sink = try await PgvectorKeywordTests.sink(Self.settings(postgres, "kw_indexed"), holding: rows)
        let (indexes, plan) = try await sink.withConnection("plan") { connection in
            let indexes = try connection.query(
                "SELECT indexdef FROM pg_indexes WHERE tablename = 'kw_indexed_keyword_lengths'"
            ).compactMap { $0[0] ?? nil }
            // The table is small: the planner would scan it; the plan must be able to use the index.
            try connection.query("SET enable_seqscan = off")
            let corpus = PgvectorSink.restrictedCorpus(
                table: "kw_indexed",
                sums: "kw_indexed_keyword_lengths",
                field: "readers",
                access: "TRUE",
                keeps: true,
                names: "$1::text[]"
            )
            let plan = try connection.query("EXPLAIN " + corpus, ["{alice}"]).compactMap { $0[0] ?? nil }
            return (indexes, plan.joined(separator: "\n"))
        }
        #expect(indexes.contains { $0.contains("USING gin (readers)") }, "\(indexes)")
        #expect(plan.contains("kw_indexed_keyword_lengths_readers"), "\(plan)")
    }

    @Test("restricted keyword scores count only readable rows, through updates, deletes and a run's fold")
    func restrictedCorpus() async throws {
        let postgres = try await PostgresForTest.launch()
        defer { postgres.stop() }
        var rows = (0..<160).map { Self.record($0) } + Self.crowd(80, from: 1000)
        let sink = try await PgvectorKeywordTests.sink(Self.settings(postgres, "kw_access"), holding: rows)
        try await Self.expectSumsByReaders(sink, "kw_access")
        try await Self.expectAsIfAlone(sink, rows: rows, postgres, table: "kw_alone_1", "loaded")
        // Unrestricted, the crowd counts: the same query scores otherwise (the check above can fail).
        let everyone = try await sink.search(SearchRequest(mode: .keyword, text: "invoice tax", k: 5))
        #expect(everyone.contains { $0.record.metadata["readers"] == .strings(["bob"]) })

        // A second run: readers changed (updates move rows between readers lists), rows deleted, new ones.
        let writer = try PgvectorSink(settings: Self.settings(postgres, "kw_access"))
        try await writer.prepare(embedder: PgvectorKeywordTests.identity)
        var changed: [VectorRecord] = []
        for n in stride(from: 3, to: 60, by: 4) {
            rows[n].metadata["readers"] = .strings(["alice"])
            changed.append(rows[n])
        }
        for n in stride(from: 0, to: 40, by: 4) {
            rows[n].metadata["readers"] = .strings(["bob"])
            rows[n].text += " ledger ledger"
            changed.append(rows[n])
        }
        try await writer.upsert(changed)
        let gone = Set(stride(from: 81, to: 141, by: 2))
        try await writer.delete(gone.map { rows[$0].id })
        rows.removeAll { gone.contains(Int($0.id.rawValue, radix: 16)!) }
        let added = (2000..<2020).map { Self.record($0) }
        try await writer.upsert(added)
        rows += added
        try await Self.expectSumsByReaders(sink, "kw_access")
        try await Self.expectAsIfAlone(sink, rows: rows, postgres, table: "kw_alone_2", "written, before the fold")
        try await writer.finish()  // folds the rows of differences
        try await Self.expectSumsByReaders(sink, "kw_access")
        try await Self.expectAsIfAlone(sink, rows: rows, postgres, table: "kw_alone_3", "folded")

        // Sums kept without the field (access control was off when the table was prepared): counted by a scan.
        let unkept = try await PgvectorKeywordTests.sink(
            Self.settings(postgres, "kw_unkept", access: false),
            holding: rows
        )
        _ = unkept
        let reader = try PgvectorSink(settings: Self.settings(postgres, "kw_unkept"))
        try await Self.expectAsIfAlone(reader, rows: rows, postgres, table: "kw_alone_4", "sums not by readers")
    }

    @Test("the pipeline's access control gives the sink its field; off, none")
    func descriptorGivesTheField() throws {
        var configuration = PipelineConfiguration()
        configuration.sink.kind = .pgvector
        configuration.sink.url = "postgresql://127.0.0.1:1/none"
        configuration.access.isEnabled = true
        configuration.access.field = "readers"
        let made = try #require(try SinkDescriptor.pgvector.make(configuration, true) as? PgvectorSink)
        #expect(made.settings.accessField == "readers")
        configuration.access.isEnabled = false
        let off = try #require(try SinkDescriptor.pgvector.make(configuration, true) as? PgvectorSink)
        #expect(off.settings.accessField == nil)
    }
}
