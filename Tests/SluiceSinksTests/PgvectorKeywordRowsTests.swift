import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// Rows and records scored on their own in pgvector's keyword search (PgvectorSink+KeywordRows), against a
/// real PostgreSQL 18 + pgvector: the units are the local store's (KeywordRowsTests' cases), a table chunk
/// ranks as its best row and a JSON chunk as its best record, prose scores as before, a replaced or deleted
/// chunk's rows go with it, a table of the older shape gains them once, and a role that may not create the
/// function keeps searching, with chunks scored whole, and says so.
@Suite(.serialized)
struct PgvectorKeywordRowsTests {
    typealias Rows = KeywordRowsTests

    static let identity = EmbedderIdentity(provider: "test", model: "rows", dimensions: 2)

    static func sink(_ settings: PgvectorSink.Settings, holding records: [VectorRecord]) async throws -> PgvectorSink {
        try await PgvectorKeywordTests.sink(settings, holding: records, identity: identity)
    }

    static func keyword(_ sink: PgvectorSink, _ text: String) async throws -> [SearchHit] {
        try await sink.search(SearchRequest(mode: .keyword, text: text, k: 20))
    }

    static func ids(_ hits: [SearchHit]) -> [String] { hits.map(\.record.id.rawValue) }

    /// `records` with the table and record chunks' format taken away: every chunk scored whole, as before.
    static func whole(_ records: [VectorRecord]) -> [VectorRecord] {
        records.map {
            var record = $0
            record.metadata["format"] = nil
            return record
        }
    }

    /// Benchmarks/retrieval `q060` in small: the answer is one row of a table chunk of releases; a long prose
    /// chunk holds more of the query's words (common ones: `long`, `term`, `support`, `end`, `date`, which the
    /// other prose holds too). `ts_rank` has no length in it, so the prose ranked first, whole or by rows.
    static let releases: [VectorRecord] =
        [
            Rows.releases[0],
            LocalSinkKeywordTests.record(
                "policy",
                """
                This policy describes the long term plan for Python in Debian. The end date of support for each \
                runtime is set by the release team; support is long term where possible, the date is announced \
                in advance, and the end of support is announced again when the date is near. Packages that \
                depend on a runtime past the end of its support are removed from the archive at that date.
                """,
                key: "text/python-policy.txt"
            ),
        ]
        + (0..<4).map {
            LocalSinkKeywordTests.record(
                "filler\($0)",
                "Note \($0): the long term support ends at a date the term sheet sets; end of note.",
                key: "notes/\($0).txt"
            )
        }

    static let query = "Debian squeeze long term support end date"

    @Test("a table chunk whose matching row is diluted by its other rows ranks first; JSON records too")
    func rowRanksFirst() async throws {
        let postgres = try await PostgresForTest.launch()
        defer { postgres.stop() }
        let sink = try await Self.sink(postgres.settings(table: "keyword_rows"), holding: Self.releases)
        // Scored whole, the prose was first.
        let before = try await Self.sink(
            postgres.settings(table: "keyword_whole"),
            holding: Self.whole(Self.releases)
        )
        let whole = try await Self.keyword(before, Self.query)
        #expect(Self.ids(whole).first == "policy", "\(whole.map { "\($0.record.id.rawValue) \($0.score)" })")
        let rows = try await Self.keyword(sink, Self.query)
        #expect(Self.ids(rows).first == "releases", "\(rows.map { "\($0.record.id.rawValue) \($0.score)" })")
        let records = try await Self.sink(
            postgres.settings(table: "keyword_records"),
            holding: Rows.currencies + Rows.releases
        )
        #expect(Self.ids(try await Self.keyword(records, "swedish currency iso code sek")).first == "iso4217")
        // A value's blank line stays in its record.
        #expect(Self.ids(try await Self.keyword(records, "since 1873 krona")).first == "iso4217")
        let info = try await sink.info()
        #expect(info.details["keyword rows"] == "table rows and JSON records scored on their own")
        #expect(info.warnings.isEmpty)
        #expect(sink.preparationNotice == nil)

        // The run recorded the average chunk length; without it a search counts it, and ranks the same.
        let ranked = try await Self.keyword(sink, Self.query).map { "\($0.record.id.rawValue) \($0.score)" }
        try await sink.withConnection("the recorded length") { connection in
            let comment = try connection.query(
                "SELECT obj_description('keyword_rows_text_search'::regclass, 'pg_class')"
            ).first?[0]
            #expect(comment?.hasPrefix(PgvectorSink.averageLengthPrefix) == true)
            try connection.query("COMMENT ON INDEX keyword_rows_text_search IS NULL")
        }
        #expect(try await Self.keyword(sink, Self.query).map { "\($0.record.id.rawValue) \($0.score)" } == ranked)
    }

    @Test("prose chunks score exactly as before, beside table and record chunks")
    func proseScoresAsBefore() async throws {
        let postgres = try await PostgresForTest.launch()
        defer { postgres.stop() }
        let records = Self.releases + Rows.currencies + Rows.releases
        let rows = try await Self.sink(postgres.settings(table: "prose_rows"), holding: records)
        let whole = try await Self.sink(postgres.settings(table: "prose_whole"), holding: Self.whole(records))
        for query in [Self.query, Rows.query, "releases invoices totals", "swiss franc"] {
            let before = Dictionary(
                uniqueKeysWithValues: try await Self.keyword(whole, query).map { ($0.record.id.rawValue, $0.score) }
            )
            let after = try await Self.keyword(rows, query)
            #expect(Set(Self.ids(after)) == Set(before.keys), "\(query)")
            for hit in after where hit.record.metadata["format"] == nil {
                #expect(hit.score == before[hit.record.id.rawValue], "\(query): \(hit.record.id.rawValue)")
            }
        }
    }

    @Test("the units PostgreSQL cuts are the local store's, each with the chunk's title or file name and headings")
    func unitsAreTheLocalStores() async throws {
        let postgres = try await PostgresForTest.launch()
        defer { postgres.stop() }
        let cases: [(String, String)] = [
            ("csv", "a: 1\nb: 2\n\nc: 3"),
            ("tsv", "a: 1\n  \nb: 2"),
            ("xlsx", "# Sheet\n\na: 1; b: 2\na: 3; b: 4"),
            ("ods", "a: 1\n"),
            ("csv", "a: 1\n---\nb: 2"),
            ("json", "$.a: x\n$.b: y\n\n$.c: z\n\nmore z\n\n\n$.d: w"),
            ("json", "partial: q\n$.e: r\n\n$.f: s"),
            ("jsonl", "$.a: x\n$.b: y"),
            ("markdown", "a\nb\n\nc"),
            ("", "a\nb"),
        ]
        var records: [VectorRecord] = []
        for (number, (format, text)) in cases.enumerated() {
            var record = LocalSinkKeywordTests.record("u\(number)", text, key: "sheets/unit \(number).ods")
            if !format.isEmpty { record.metadata["format"] = .string(format) }
            record.metadata["headings"] = .strings(["Part", "Section"])
            records.append(record)
        }
        let sink = try await Self.sink(postgres.settings(table: "keyword_units"), holding: records)
        for record in records {
            // The local store's units, parsed here as PostgreSQL parses a unit: its lines, then the context.
            // Units without a term of their own are left out (`KeywordIndex.Units`), and fewer than two is none.
            let cut = (KeywordIndex.units(of: record) ?? []).map { $0.joined(separator: "\n") }
                .filter { !KeywordTokenizer.terms(of: $0).isEmpty }
            let units = cut.count > 1 ? cut : []
            let matches = try await sink.withConnection("the units of \(record.id.rawValue)") { connection in
                try connection.query(
                    """
                    SELECT text_search_units IS NOT DISTINCT FROM (SELECT CASE WHEN count(*) > 0 THEN
                        array_agg(to_tsvector('sluice_english_unaccent', u || E'\\n' || 'unit ' || $2 || E'\\n'
                        || '["Part", "Section"]') ORDER BY n) END FROM unnest($3::text[]) WITH ORDINALITY AS x(u, n))
                    FROM keyword_units WHERE id = $1
                    """,
                    [record.id.rawValue, record.id.rawValue.dropFirst().description, Self.arrayLiteral(units)]
                ).first?[0]
            }
            #expect(matches == "t", "\(record.text.debugDescription): \(units)")
        }
    }

    /// `texts` as a PostgreSQL text array literal.
    static func arrayLiteral(_ texts: [String]) -> String {
        "{"
            + texts.map {
                "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                    + "\""
            }.joined(separator: ",") + "}"
    }

    @Test("a replaced or deleted chunk's rows go with it; a table of the older shape gains them once, embeddings kept")
    func replaceDeleteAndUpgrade() async throws {
        let postgres = try await PostgresForTest.launch()
        defer { postgres.stop() }
        let settings = postgres.settings(table: "Keyword_Rows_Upgrade")
        let sink = try await Self.sink(settings, holding: Self.releases)
        let query = Self.query
        #expect(Self.ids(try await Self.keyword(sink, query)).first == "releases")
        let units = {
            try await sink.withConnection("units") { connection in
                try connection.query(
                    """
                    SELECT id FROM "Keyword_Rows_Upgrade" WHERE text_search_units IS NOT NULL ORDER BY id
                    """
                ).map { $0[0] ?? "" }
            }
        }
        #expect(try await units() == ["releases"])

        // Replaced by prose: its rows go, it ranks whole.
        var replaced = Self.releases[0]
        replaced.metadata["format"] = nil
        try await sink.upsert([replaced])
        #expect(try await units().isEmpty)
        #expect(Self.ids(try await Self.keyword(sink, query)).first == "policy")
        try await sink.upsert([Self.releases[0]])
        #expect(try await units() == ["releases"])
        #expect(Self.ids(try await Self.keyword(sink, query)).first == "releases")
        try await sink.delete([Self.releases[0].id])
        #expect(try await units().isEmpty)
        #expect(!Self.ids(try await Self.keyword(sink, query)).contains("releases"))
        try await sink.upsert([Self.releases[0]])

        // A table of today's shape: no units column, no function. Prepare adds them, embeddings kept.
        let embeddings = { (sink: PgvectorSink) in
            try await sink.withConnection("embeddings") { connection in
                try connection.query("SELECT id, embedding::text FROM \"Keyword_Rows_Upgrade\" ORDER BY id").map {
                    $0.map { $0 ?? "" }
                }
            }
        }
        try await sink.withConnection("the older shape") { connection in
            try connection.query("ALTER TABLE \"Keyword_Rows_Upgrade\" DROP COLUMN text_search_units")
            try connection.query("DROP FUNCTION sluice_keyword_units")
        }
        let before = try await embeddings(sink)
        #expect(Self.ids(try await Self.keyword(sink, query)).first == "policy")  // whole, as before
        let info = try await sink.info()
        #expect(info.details["keyword rows"] == "scored whole")
        let reopened = try PgvectorSink(settings: settings)
        try await reopened.prepare(embedder: Self.identity)
        #expect(reopened.preparationNotice == nil)
        #expect(Self.ids(try await Self.keyword(reopened, query)).first == "releases")
        #expect(try await embeddings(reopened) == before)
        // Once: a second prepare leaves the column alone (its attribute number stays).
        let column = { (sink: PgvectorSink) in
            try await sink.withConnection("the column") { connection in
                try connection.query(
                    """
                    SELECT attnum FROM pg_attribute WHERE attrelid = '"Keyword_Rows_Upgrade"'::regclass
                    AND attname = 'text_search_units'
                    """
                ).first?[0] ?? nil
            }
        }
        let first = try await column(reopened)
        try await PgvectorSink(settings: settings).prepare(embedder: Self.identity)
        #expect(try await column(reopened) == first)
    }

    @Test("a role that may not create the function keeps searching, chunks scored whole, and is told why")
    func roleWithoutCreate() async throws {
        let postgres = try await PostgresForTest.launch()
        defer { postgres.stop() }
        let admin = try PgvectorSink(settings: postgres.settings(table: "setup"))
        try await admin.withConnection("a schema the role may use but not create in") { connection in
            try connection.query("CREATE SCHEMA shelf")
            try connection.query("CREATE ROLE reader LOGIN PASSWORD 'pw'")
            try connection.query("GRANT USAGE ON SCHEMA shelf TO reader")
        }
        // The table made by an older Sluice (no units column), then given to the role.
        let settings = postgres.settings(table: "shelf.facts")
        let older = try await Self.sink(settings, holding: Self.releases)
        try await older.withConnection("the older shape, owned by the role") { connection in
            try connection.query("ALTER TABLE shelf.facts DROP COLUMN text_search_units")
            try connection.query("DROP FUNCTION shelf.sluice_keyword_units")
            try connection.query("ALTER TABLE shelf.facts OWNER TO reader")
        }
        var role = settings
        role.url = settings.url.replacingOccurrences(of: "postgres@", with: "reader@")
        let sink = try PgvectorSink(settings: role)
        try await sink.prepare(embedder: Self.identity)
        let notice = try #require(sink.preparationNotice)
        #expect(notice.contains("scores table rows and JSON records whole"))
        #expect(notice.contains("CREATE"))
        #expect(Self.ids(try await Self.keyword(sink, Self.query)).first == "policy")
        let info = try await sink.info()
        #expect(info.details["keyword rows"] == "scored whole")
        #expect(info.warnings.contains { $0.contains("scores table rows and JSON records whole") })
        // Once a role with CREATE made the function, the owner adds the column on its next run.
        try await admin.withConnection("the function") { connection in
            try connection.query(PgvectorSink.keywordUnitsDefinition(table: PgvectorTableName(parsing: "shelf.facts")!))
            try connection.query(
                "COMMENT ON FUNCTION shelf.sluice_keyword_units(regconfig, text, text, text) IS "
                    + PgvectorTableName.literal(PgvectorSink.keywordUnitsVersion)
            )
        }
        let again = try PgvectorSink(settings: role)
        try await again.prepare(embedder: Self.identity)
        #expect(again.preparationNotice == nil)
        #expect(Self.ids(try await Self.keyword(again, Self.query)).first == "releases")
    }
}
