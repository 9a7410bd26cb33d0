import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// The sums behind pgvector's average keyword length (PgvectorSink+KeywordLengths), against a real
/// PostgreSQL 18 + pgvector: every write path (the bulk `COPY`, the staging upsert's new and replaced rows,
/// deletes, `TRUNCATE`, a rolled-back write) keeps them equal to what a scan counts, the end of a run folds
/// them into one row and records the scan's average, a table of the older shape gains them counted once, and
/// a writer that does not own the table still writes; `sink drop` takes what the sink made for the table
/// with it, and leaves what another table still uses.
@Suite(.serialized)
struct PgvectorKeywordLengthsTests {
    static let identity = EmbedderIdentity(provider: "test", model: "lengths", dimensions: 3)

    /// `count` records from `start`, of different lengths (a record's text repeats distinct words).
    static func records(_ start: Int, _ count: Int, words: Int = 3) -> [VectorRecord] {
        (start..<start + count).map { number in
            PgvectorKeywordTests.record(
                number,
                (0..<(words + number % 7)).map { "w\(number)x\($0)" }.joined(separator: " ")
            )
        }
    }

    /// What the table's rows add up to by a scan, the kept sums, and the number of rows the sums table holds.
    static func measure(
        _ sink: PgvectorSink,
        _ table: String
    ) async throws -> (scan: [String], sums: [String], rows: String) {
        try await sink.withConnection("measure") { connection in
            let scan = try connection.query(
                "SELECT coalesce(sum(length(text_search)), 0)::text, count(*)::text FROM \(table)"
            )[0].map { $0 ?? "" }
            let sums = try connection.query(
                "SELECT coalesce(sum(lexemes), 0)::text, coalesce(sum(chunks), 0)::text FROM \(table)_keyword_lengths"
            )[0].map { $0 ?? "" }
            let rows = try connection.query("SELECT count(*)::text FROM \(table)_keyword_lengths")[0][0] ?? ""
            return (scan, sums, rows)
        }
    }

    /// The average the last run recorded in the keyword index's comment, and the scan's.
    static func averages(_ sink: PgvectorSink, _ table: String) async throws -> (recorded: String?, scan: String?) {
        try await sink.withConnection("averages") { connection in
            let comment =
                try connection.query("SELECT obj_description('\(table)_text_search'::regclass, 'pg_class')").first?[0]
                ?? nil
            let scan =
                try connection.query("SELECT coalesce(avg(length(text_search)), 1)::float8::text FROM \(table)")
                .first?[0] ?? nil
            return (
                comment.map { String($0.dropFirst(PgvectorSink.averageLengthPrefix.count)) },
                scan.flatMap(Double.init).map { String($0) }
            )
        }
    }

    @Test("every write path keeps the sums a scan counts; the end of a run folds them and records the average")
    func writesKeepTheSums() async throws {
        let postgres = try await PostgresForTest.launch()
        defer { postgres.stop() }
        let settings = postgres.settings(table: "lengths")
        // The bulk path: COPY straight into the empty table.
        let sink = try await PgvectorKeywordTests.sink(settings, holding: Self.records(0, 40), identity: Self.identity)
        var measured = try await Self.measure(sink, "lengths")
        // Each text's words, and its file name (`doc<n>`, part of the keyword column).
        let lexemes: Int = (0..<40).map { (number: Int) -> Int in 3 + number % 7 + 1 }.reduce(0, +)
        #expect(measured.scan == [String(lexemes), "40"])
        #expect(measured.sums == measured.scan)
        #expect(measured.rows == "1")
        var averages = try await Self.averages(sink, "lengths")
        #expect(averages.recorded != nil && averages.recorded == averages.scan)

        // The staging path: new rows and replaced ones (longer and shorter), then deletes, in several
        // statements of a second run.
        let writer = try PgvectorSink(settings: settings)
        try await writer.prepare(embedder: Self.identity)
        try await writer.upsert(Self.records(30, 20, words: 9))
        try await writer.upsert(Self.records(5, 3, words: 1))
        try await writer.delete((10..<15).map { PgvectorKeywordTests.record($0, "").id })
        try await writer.delete([PgvectorKeywordTests.record(999, "").id])
        measured = try await Self.measure(writer, "lengths")
        #expect(measured.sums == measured.scan, "\(measured)")
        #expect(measured.scan[1] == "45")
        #expect(Int(measured.rows)! > 1)
        // A write rolled back takes its row of differences with it.
        try await writer.withConnection("a write rolled back") { connection in
            try connection.query("BEGIN")
            try connection.query("DELETE FROM lengths WHERE id IN (SELECT id FROM lengths LIMIT 3)")
            try connection.query("ROLLBACK")
        }
        try await writer.finish()
        measured = try await Self.measure(writer, "lengths")
        #expect(measured.sums == measured.scan, "\(measured)")
        #expect(measured.rows == "1")
        averages = try await Self.averages(writer, "lengths")
        #expect(averages.recorded != nil && averages.recorded == averages.scan)

        // TRUNCATE (removeAll) empties them; the next run records the empty table's average, 1.
        try await writer.removeAll()
        #expect(try await Self.measure(writer, "lengths").sums == ["0", "0"])
        try await writer.finish()
        #expect(try await Self.averages(writer, "lengths").recorded == "1.0")
        try await writer.upsert(Self.records(100, 5))
        try await writer.finish()
        measured = try await Self.measure(writer, "lengths")
        #expect(measured.sums == measured.scan && measured.scan[1] == "5", "\(measured)")
    }

    @Test("a table without the sums gains them counted once; sums of another column or table are counted again")
    func olderTableGainsThem() async throws {
        let postgres = try await PostgresForTest.launch()
        defer { postgres.stop() }
        let settings = postgres.settings(table: "older")
        let sink = try await PgvectorKeywordTests.sink(settings, holding: Self.records(0, 12), identity: Self.identity)
        try await sink.withConnection("the older shape") { connection in
            for (trigger, _, _) in PgvectorSink.keywordLengthsTriggers {
                try connection.query("DROP TRIGGER \(trigger) ON older")
            }
            try connection.query("DROP FUNCTION older_keyword_lengths()")
            try connection.query("DROP TABLE older_keyword_lengths")
            try connection.query("INSERT INTO older SELECT 'extra', 'k', 0, 'one two three four', '{}', '[1,2,3]'")
        }
        let reopened = try PgvectorSink(settings: settings)
        try await reopened.prepare(embedder: Self.identity)
        var measured = try await Self.measure(reopened, "older")
        #expect(measured.scan[1] == "13")
        #expect(measured.sums == measured.scan)
        // Prepared again, the sums are left as they are (not counted again: still one row beside a write's).
        try await reopened.upsert(Self.records(20, 2))
        try await PgvectorSink(settings: settings).prepare(embedder: Self.identity)
        measured = try await Self.measure(reopened, "older")
        #expect(measured.rows == "2" && measured.sums == measured.scan, "\(measured)")
        // Sums whose comment is not the current one (a keyword column of another configuration, a table made
        // again under the name): counted again.
        try await reopened.withConnection("sums of another table") { connection in
            try connection.query("INSERT INTO older_keyword_lengths VALUES (1000, 1000)")
            try connection.query("COMMENT ON TABLE older_keyword_lengths IS 'sluice keyword lengths: 0'")
        }
        try await PgvectorSink(settings: settings).prepare(embedder: Self.identity)
        measured = try await Self.measure(reopened, "older")
        #expect(measured.rows == "1" && measured.sums == measured.scan, "\(measured)")
    }

    @Test("a writer that does not own the table writes, and the owner's run records the average from the sums")
    func writerRole() async throws {
        let postgres = try await PostgresForTest.launch()
        defer { postgres.stop() }
        let settings = postgres.settings(table: "shared")
        let owner = try await PgvectorKeywordTests.sink(settings, holding: Self.records(0, 10), identity: Self.identity)
        try await owner.withConnection("a writer role") { connection in
            try connection.query("CREATE ROLE writer LOGIN PASSWORD 'pw'")
            try connection.query("GRANT SELECT, INSERT, UPDATE, DELETE ON shared TO writer")
        }
        var role = settings
        role.url = settings.url.replacingOccurrences(of: "postgres@", with: "writer@")
        let writer = try PgvectorSink(settings: role)
        try await writer.upsert(Self.records(5, 10, words: 6))
        try await writer.delete([PgvectorKeywordTests.record(0, "").id])
        // The writer may neither read the sums nor comment on the index: its run's end leaves them.
        try await writer.finish()
        try await owner.finish()
        let measured = try await Self.measure(owner, "shared")
        #expect(measured.scan[1] == "14")
        #expect(measured.sums == measured.scan && measured.rows == "1", "\(measured)")
        let averages = try await Self.averages(owner, "shared")
        #expect(averages.recorded != nil && averages.recorded == averages.scan)
    }

    @Test("sink drop removes the table's sums, the units function and the folding configuration once unused")
    func dropRemovesWhatTheSinkMade() async throws {
        let postgres = try await PostgresForTest.launch()
        defer { postgres.stop() }
        let first = try await PgvectorKeywordTests.sink(
            postgres.settings(table: "first"),
            holding: Self.records(0, 3),
            identity: Self.identity
        )
        let second = try await PgvectorKeywordTests.sink(
            postgres.settings(table: "second"),
            holding: Self.records(0, 3),
            identity: Self.identity
        )
        try await first.withConnection("a schema of its own") { connection in
            try connection.query("CREATE SCHEMA other")
        }
        let elsewhere = try await PgvectorKeywordTests.sink(
            postgres.settings(table: "other.third"),
            holding: Self.records(0, 3),
            identity: Self.identity
        )
        let objects = { (schema: String) in
            try await first.withConnection("what is left in \(schema)") { connection in
                try connection.query(
                    """
                    SELECT 'function ' || p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                        WHERE n.nspname = $1 AND p.proname LIKE 'sluice%' OR n.nspname = $1 AND p.proname LIKE '%keyword%'
                    UNION ALL SELECT 'configuration ' || c.cfgname FROM pg_ts_config c
                        JOIN pg_namespace n ON n.oid = c.cfgnamespace WHERE n.nspname = $1
                    UNION ALL SELECT 'table ' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                        WHERE n.nspname = $1 AND c.relkind = 'r'
                    ORDER BY 1
                    """,
                    [schema]
                ).map { $0[0] ?? "" }
            }
        }
        #expect(
            try await objects("public") == [
                "configuration sluice_english_unaccent", "function first_keyword_lengths",
                "function second_keyword_lengths", "function sluice_keyword_units", "table first",
                "table first_keyword_lengths", "table second", "table second_keyword_lengths",
            ]
        )
        try await first.drop()
        // The second table's columns still use the function and the configuration.
        #expect(
            try await objects("public") == [
                "configuration sluice_english_unaccent", "function second_keyword_lengths",
                "function sluice_keyword_units", "table second", "table second_keyword_lengths",
            ]
        )
        #expect(try await second.count() == 3)
        #expect(!(try await second.search(SearchRequest(mode: .keyword, text: "w1x0", k: 5)).isEmpty))
        try await second.drop()
        #expect(try await objects("public").isEmpty)
        // Another schema's own function and configuration are another table's: kept.
        #expect(
            try await objects("other") == [
                "configuration sluice_english_unaccent", "function sluice_keyword_units",
                "function third_keyword_lengths", "table third", "table third_keyword_lengths",
            ]
        )
        try await elsewhere.drop()
        #expect(try await objects("other").isEmpty)
        // Dropped twice: nothing to do, no error.
        try await first.drop()
    }
}
