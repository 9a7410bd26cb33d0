import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// Keyword search in the pgvector sink (PgvectorSink+Keyword) against a real PostgreSQL 18 + pgvector:
/// the generated tsvector column follows upserts and deletes, a table made before it gets it, and a
/// filter applies in the SQL.
@Suite(.serialized)
struct PgvectorKeywordTests {
    static func record(_ id: Int, _ text: String) -> VectorRecord {
        VectorRecord(
            id: VectorID(rawValue: String(format: "%032x", id)),
            documentKey: "doc\(id).txt",
            ordinal: 0,
            text: text,
            vector: [1, Float(id), 0.5],
            metadata: ["page": "1"]
        )
    }

    static let identity = EmbedderIdentity(provider: "test", model: "kw", dimensions: 3)

    /// A sink on `settings`' table, prepared for `identity`, holding `rows` once they are written and finished.
    static func sink(
        _ settings: PgvectorSink.Settings,
        holding rows: [VectorRecord],
        identity: EmbedderIdentity = identity
    ) async throws -> PgvectorSink {
        let sink = try PgvectorSink(settings: settings)
        try await sink.prepare(embedder: identity)
        try await sink.upsert(rows)
        try await sink.finish()
        return sink
    }

    /// The hits' record numbers (``record(_:_:)``'s `id`).
    static func ids(_ hits: [SearchHit]) -> [Int] { hits.map { Int($0.record.id.rawValue, radix: 16)! } }

    @Test("the column holds the title or file name and headings besides the text; an older column is made again")
    func titleFileNameAndHeadings() async throws {
        let postgres = try await PostgresForTest.launch()
        defer { postgres.stop() }
        let settings = postgres.settings(table: "keyword_fields")
        let sink = try PgvectorSink(settings: settings)
        let identity = EmbedderIdentity(provider: "test", model: "kw", dimensions: 3)
        try await sink.prepare(embedder: identity)
        var row = Self.record(1, "version: 2.2; codename: Potato; eol: 2003-06-30")
        row.documentKey = "csv/debian-releases.csv"
        var titled = Self.record(2, "Alpha-2 code: GB; Numeric code: 826")
        titled.documentKey = "xlsx/iso-3166-1-countries.xlsx"
        titled.metadata["title"] = .string("Sovereign states")
        titled.metadata["headings"] = .strings(["Countries", "Europe"])
        let other = Self.record(3, "Nothing about it here.")
        try await sink.upsert([row, titled, other])
        try await sink.finish()
        func keyword(_ text: String) async throws -> [Int] {
            try await sink.search(SearchRequest(mode: .keyword, text: text, k: 10)).map {
                Int($0.record.id.rawValue, radix: 16)!
            }
        }
        #expect(try await keyword("debian") == [1])  // the file name of an untitled document
        #expect(try await keyword("csv").isEmpty)  // not its extension
        #expect(try await keyword("sovereign") == [2])  // the title
        #expect(try await keyword("europe") == [2])  // the heading path
        #expect(try await keyword("iso").isEmpty)  // a titled document's file name is not indexed
        let hits = try await sink.search(SearchRequest(mode: .keyword, text: "debian sovereign", k: 10))
        #expect(Set(hits.map(\.record.text)) == [row.text, titled.text])

        // A table whose column holds the text alone (made before 2026-11-29): prepare makes it again, and the
        // rows keep their embeddings.
        try await sink.withConnection("the older column") { connection in
            try connection.query("ALTER TABLE keyword_fields DROP COLUMN text_search")
            try connection.query(
                """
                ALTER TABLE keyword_fields ADD COLUMN text_search tsvector
                GENERATED ALWAYS AS (to_tsvector('english', text)) STORED
                """
            )
        }
        #expect(try await keyword("debian").isEmpty)
        let embeddings = { (sink: PgvectorSink) in
            try await sink.withConnection("embeddings") { connection in
                try connection.query("SELECT id, embedding::text FROM keyword_fields ORDER BY id").map {
                    $0.map { $0 ?? "" }
                }
            }
        }
        let before = try await embeddings(sink)
        let reopened = try PgvectorSink(settings: settings)
        try await reopened.prepare(embedder: identity)
        let again = try await reopened.search(SearchRequest(mode: .keyword, text: "debian europe", k: 10))
        #expect(Set(again.map { Int($0.record.id.rawValue, radix: 16)! }) == [1, 2])
        #expect(try await embeddings(reopened) == before)
    }

    @Test("a word whose stem Snowball stems again (release → releas → relea) still counts, and every hit scores")
    func stemsAreNotStemmedTwice() async throws {
        let postgres = try await PostgresForTest.launch()
        defer { postgres.stop() }
        let sink = try await Self.sink(
            postgres.settings(table: "keyword_stems"),
            holding: [
                Self.record(1, "The release of the database is planned."),
                Self.record(2, "Notes, notes and more notes on planning."),
                Self.record(3, "The database release notes."),
            ]
        )
        func keyword(_ text: String) async throws -> [SearchHit] {
            try await sink.search(SearchRequest(mode: .keyword, text: text, k: 10))
        }
        // `databas` and `releas` are the query's lexemes; stemmed once more they are `databa` and `relea`,
        // which no row holds: the ranking counted `note` alone and put the rows holding only the lost words
        // first, with no score.
        let hits = try await keyword("database release notes")
        #expect(Self.ids(hits).first == 3)
        #expect(Set(Self.ids(hits)) == [1, 2, 3])
        #expect(hits.allSatisfy { $0.score > 0 })
        let release = try await keyword("releases")
        #expect(Set(Self.ids(release)) == [1, 3])
        #expect(release.allSatisfy { $0.score > 0 })
    }

    @Test("keyword search finds the rare term first, follows replace and delete, and is added to an older table")
    func keywordSearch() async throws {
        let postgres = try await PostgresForTest.launch()
        defer { postgres.stop() }
        let settings = postgres.settings(table: "Keyword_Chunks")
        let sink = try await Self.sink(
            settings,
            holding: [
                Self.record(1, "The invoice total is 120 CHF including tax."),
                Self.record(2, "The invoice total is 120 EUR including tax and the invoice date."),
                Self.record(3, "Shipping is free above a total of 50."),
            ]
        )
        #expect(sink.searchModes == [.vector, .keyword])
        func keyword(_ text: String) async throws -> [Int] {
            Self.ids(try await sink.search(SearchRequest(mode: .keyword, text: text, k: 10)))
        }
        let hits = try await keyword("what is the invoice total in CHF?")
        #expect(hits.first == 1)
        #expect(Set(hits) == [1, 2, 3])  // any word matches: an OR of the query's words
        #expect(try await keyword("zebra").isEmpty)
        #expect(try await keyword(" ?! ").isEmpty)

        // Replace and delete: the generated column follows the rows.
        try await sink.upsert([Self.record(1, "A refund is issued in GBP.")])
        try await sink.delete([Self.record(3, "").id])
        #expect(try await keyword("CHF").isEmpty)
        #expect(try await keyword("shipping").isEmpty)
        #expect(try await keyword("refund GBP") == [1])

        // A filter is part of the SQL: applied while ranking.
        let filtered = try await sink.search(
            SearchRequest(
                mode: .keyword,
                text: "invoice",
                k: 3,
                filter: try SearchFilter(parsing: "document_key = \"doc2.txt\"")
            )
        )
        #expect(filtered.map(\.record.documentKey) == ["doc2.txt"])

        // A table made before keyword search: prepare adds the column and its index.
        try await sink.withConnection("drop the column") { connection in
            try connection.query("ALTER TABLE \"Keyword_Chunks\" DROP COLUMN text_search")
        }
        let reopened = try PgvectorSink(settings: settings)
        try await reopened.prepare(embedder: Self.identity)
        let again = try await reopened.search(SearchRequest(mode: .keyword, text: "invoice date", k: 5))
        #expect(again.map(\.record.id.rawValue) == [Self.record(2, "").id.rawValue])
        let indexes = try await reopened.withConnection("indexes") { connection in
            try connection.query("SELECT indexname FROM pg_indexes WHERE tablename = 'Keyword_Chunks'").map { $0[0] }
        }
        #expect(indexes.contains("Keyword_Chunks_text_search"))
    }

    @Test(
        "accents fold as in the local store (bolivar finds Bolívar), codes stay exact, an english column is made again"
    )
    func accentsFold() async throws {
        let postgres = try await PostgresForTest.launch()
        defer { postgres.stop() }
        let settings = postgres.settings(table: "keyword_accents")
        let sink = try await Self.sink(
            settings,
            holding: [
                Self.record(1, "Simón Bolívar led the campaigns."),
                Self.record(2, "The café serves a naïve crème brûlée."),
                Self.record(3, "Set DEVRANDOM_WAIT to block until the pool is ready (since 5.6.1)."),
                Self.record(4, "Müller wrote the Übersicht."),
            ]
        )
        func keyword(_ sink: PgvectorSink, _ text: String) async throws -> [Int] {
            Self.ids(try await sink.search(SearchRequest(mode: .keyword, text: text, k: 10)))
        }
        #expect(try await keyword(sink, "bolivar") == [1])
        #expect(try await keyword(sink, "Bolívar") == [1])
        #expect(try await keyword(sink, "cafe") == [2])
        #expect(try await keyword(sink, "naive") == [2])
        #expect(try await keyword(sink, "creme brulee") == [2])
        #expect(try await keyword(sink, "muller") == [4])  // ü → u, as Lucene's ASCIIFoldingFilter
        #expect(try await keyword(sink, "ubersicht") == [4])
        #expect(try await keyword(sink, "DEVRANDOM_WAIT") == [3])
        #expect(try await keyword(sink, "5.6.1") == [3])
        #expect(try await keyword(sink, "5.6.2").isEmpty)

        // A column made by an older Sluice, on `english` with its comment: found with `english` until the next
        // prepare makes it again with the folding configuration.
        try await sink.withConnection("the english column") { connection in
            try connection.query("ALTER TABLE keyword_accents DROP COLUMN text_search")
            try connection.query(
                """
                ALTER TABLE keyword_accents ADD COLUMN text_search tsvector
                GENERATED ALWAYS AS (\(PgvectorSink.textSearchExpression("english"))) STORED
                """
            )
            try connection.query(
                "COMMENT ON COLUMN keyword_accents.text_search IS 'sluice text_search: text, title or file name, headings'"
            )
        }
        #expect(try await keyword(sink, "bolivar").isEmpty)
        #expect(try await keyword(sink, "Bolívar") == [1])
        let reopened = try PgvectorSink(settings: settings)
        try await reopened.prepare(embedder: Self.identity)
        #expect(try await keyword(reopened, "bolivar") == [1])
        #expect(try await keyword(reopened, "DEVRANDOM_WAIT") == [3])
        let info = try await reopened.info()
        #expect(info.details["keyword search"] == "accents folded (sluice_english_unaccent)")
        #expect(info.warnings.isEmpty)

        // A table named with its schema, in upper case: the configuration is the schema's.
        let qualified = try await Self.sink(
            postgres.settings(table: "public.Keyword_Accents"),
            holding: [Self.record(1, "Simón Bolívar led the campaigns.")]
        )
        #expect(try await keyword(qualified, "bolivar") == [1])
    }

    @Test("a table or schema whose quoted name holds a dot loads, searches by keyword and folds accents")
    func dottedNames() async throws {
        let postgres = try await PostgresForTest.launch()
        defer { postgres.stop() }
        let admin = try PgvectorSink(settings: postgres.settings(table: "setup"))
        try await admin.withConnection("a schema with a dot in its name") { connection in
            try connection.query("CREATE SCHEMA \"my.schema\"")
        }
        let rows = [Self.record(1, "Simón Bolívar led the campaigns."), Self.record(2, "Nothing about it here.")]
        for table in [#""my.table""#, #""my.schema".chunks"#, #""my.schema"."my.table""#] {
            let sink = try await Self.sink(postgres.settings(table: table), holding: rows)
            #expect(try await sink.count() == 2, "\(table)")
            let folded = try await sink.search(SearchRequest(mode: .keyword, text: "bolivar", k: 5))
            #expect(Self.ids(folded) == [1], "\(table)")
            #expect(Self.ids(try await sink.search(SearchRequest(vector: [1, 1, 0.5], k: 1))) == [1], "\(table)")
            let info = try await sink.info()
            #expect(info.warnings.isEmpty, "\(table): \(info.warnings)")
            #expect(sink.preparationNotice == nil, "\(table)")
        }
        // The dotted schema's tables use a configuration made in that schema, not in one named `"my`.
        let schemas = try await admin.withConnection("where the configurations are") { connection in
            try connection.query(
                """
                SELECT n.nspname FROM pg_ts_config c JOIN pg_namespace n ON n.oid = c.cfgnamespace
                WHERE c.cfgname = 'sluice_english_unaccent' ORDER BY 1
                """
            ).map { $0[0] ?? "" }
        }
        #expect(schemas == ["my.schema", "public"])
    }

    @Test("without the unaccent extension keyword search stays on english and says so")
    func fallbackWithoutUnaccent() async throws {
        let postgres = try await PostgresForTest.launch()
        defer { postgres.stop() }
        let settings = postgres.settings(table: "keyword_plain")
        // A role that may create tables but not extensions: unaccent is a trusted extension, which needs
        // CREATE on the database, and PUBLIC has only CONNECT and TEMPORARY there.
        let owner = try PgvectorSink(settings: settings)
        try await owner.withConnection("a role without CREATE on the database") { connection in
            try connection.query("CREATE EXTENSION IF NOT EXISTS vector")
            try connection.query("CREATE ROLE plain LOGIN PASSWORD 'pw'")
            try connection.query("GRANT CREATE, USAGE ON SCHEMA public TO plain")
        }
        var plain = settings
        plain.url = settings.url.replacingOccurrences(of: "postgres@", with: "plain@")
        let sink = try await Self.sink(plain, holding: [Self.record(1, "Simón Bolívar led the campaigns.")])
        #expect(Self.ids(try await sink.search(SearchRequest(mode: .keyword, text: "Bolívar", k: 5))) == [1])
        #expect(try await sink.search(SearchRequest(mode: .keyword, text: "bolivar", k: 5)).isEmpty)
        let info = try await sink.info()
        #expect(info.warnings.count == 1)
        #expect(info.warnings.first?.contains("does not fold accents") == true)
        #expect(sink.preparationNotice?.contains("CREATE EXTENSION unaccent") == true)
    }
}
