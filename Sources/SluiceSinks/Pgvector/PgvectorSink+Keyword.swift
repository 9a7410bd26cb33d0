import Foundation
import SluiceCore

/// Keyword search in PostgreSQL's full-text search: a generated `text_search tsvector` column (the row's
/// text, its document's title or, without one, the document's file name, and its heading path: what the
/// local store's keyword index holds, `KeywordIndex+Fields.swift`; PostgreSQL keeps it in step with every
/// insert, update and delete in the same transaction) with a GIN index, ranked by idf-weighted `ts_rank`
/// over an OR of the query's words. Only the column holds the title, file name and headings: the `text`
/// column, results and exports keep the row's own text.
extension PgvectorSink {
    public var searchModes: Set<SearchMode> { [.vector, .keyword] }

    /// The text search configuration underneath: `english` (Snowball stemming, stop words), with accents
    /// folded where it can (``ensureFoldingConfiguration(_:table:)``). On Benchmarks/retrieval's records, with
    /// this file's ranking, `english` scored recall@5/@10 and nDCG@10 0.801/0.862/0.704 against `simple`'s
    /// 0.773/0.828/0.702 (docs/STORES.md).
    static let textSearchConfiguration = "english"

    /// The keyword index's name (``PgvectorIndexName``: within 63 bytes).
    var textSearchIndexName: PgvectorIndexName { PgvectorIndexName(table: tableName, suffix: "_text_search") }

    /// What the generated column holds, parsed with `configuration`: the text, then the title
    /// (`metadata.title`) or, without one, the document's name (the key's last path component without its
    /// query and extension, as `KeywordIndex.name(of:)`), then the heading path (`metadata.headings`, as its
    /// JSON text: the parser reads its words, not its brackets and quotes).
    static func textSearchExpression(_ configuration: String) -> String {
        "to_tsvector(\(PgvectorTableName.literal(configuration)), text || E'\\n' || \(textSearchContext))"
    }

    /// The context a row's text is searched with: its title or file name, then its heading path
    /// (``textSearchExpression(_:)``; each unit of ``keywordUnitsExpression(_:table:)`` has it too).
    static let textSearchContext = """
        coalesce(nullif(metadata->>'title', ''), \
        regexp_replace(regexp_replace(regexp_replace(document_key, '[?#].*$', ''), '^.*/', ''), '(.)\\.[^.]*$', '\\1')) \
        || E'\\n' || coalesce((metadata->'headings')::text, '')
        """

    /// The column's comment, naming what it holds and the configuration it was parsed with: a column with
    /// another comment (made before titles, file names and headings were in it, or before accents were
    /// folded, or folding since became possible) is made again.
    static func textSearchVersion(_ configuration: String) -> String {
        "sluice text_search: text, title or file name, headings; configuration=\(configuration)"
    }

    /// Adds the generated column and its GIN index to a table that lacks them (tables made before keyword
    /// search; a new table gets them here too, right after `CREATE TABLE`), and makes the column again where
    /// it holds less than ``textSearchExpression(_:)`` (the text alone, before 2026-11-29) or was parsed with
    /// another configuration (`english`, before accents were folded). Adding a stored generated column to a
    /// table that holds rows rewrites it once, under an exclusive lock; the rows' embeddings are kept,
    /// nothing is embedded again.
    /// Then adds the rows' and records' column (``ensureKeywordRows(_:table:configuration:)``) and the sums
    /// behind the average length (``ensureKeywordLengths(_:table:readers:)``), grouped by `readers` (access
    /// control's field when it is on).
    /// - Returns: why accents are not folded and why rows are not scored on their own, nil when they are.
    @discardableResult
    static func ensureTextSearch(
        _ connection: PGConnection,
        table name: PgvectorTableName,
        indexName: PgvectorIndexName,
        readers: String? = nil
    ) throws -> (folding: String?, rows: String?) {
        let table = name.quoted
        let (configuration, fallback) = try ensureFoldingConfiguration(connection, table: name)
        let version = textSearchVersion(configuration)
        if let comment = try textSearchComment(connection, table: table), comment != version {
            try connection.query("ALTER TABLE \(table) DROP COLUMN text_search")
        }
        try connection.query(
            """
            ALTER TABLE \(table) ADD COLUMN IF NOT EXISTS text_search tsvector
            GENERATED ALWAYS AS (\(textSearchExpression(configuration))) STORED
            """
        )
        try connection.query("COMMENT ON COLUMN \(table).text_search IS \(PgvectorTableName.literal(version))")
        // Looked up first (in `create`): `CREATE INDEX IF NOT EXISTS` needs CREATE on the schema even when the
        // index is there.
        try indexName.create(connection, table: name, "USING gin (text_search)")
        let rows = try ensureKeywordRows(connection, table: name, configuration: configuration)
        try ensureKeywordLengths(connection, table: name, readers: readers)
        return (fallback, rows)
    }

    /// The best `k` rows holding any of the query's words (an AND of the words, as `plainto_tsquery` or
    /// `websearch_to_tsquery` make, finds nothing for most questions in natural language), ranked by
    /// Σ idf(word) · `ts_rank`(row, word) over the words the row holds — a table or JSON chunk as its best row or
    /// record (``keywordRank(units:)``, `PgvectorSink+KeywordRows.swift`). `ts_rank` and `ts_rank_cd` alone
    /// have no inverse document frequency: for "what is the invoice total in CHF" they rank a row with
    /// "the" and "invoice" twice above the one row with "CHF". The idf is BM25's (as the local store's),
    /// with document frequencies counted through the GIN index and the row count from the planner's
    /// estimate (counted when the table was never analyzed).
    ///
    /// Each word's query is its lexeme as it stands (a one-lexeme `tsvector`'s text form read as a `tsquery`),
    /// not `plainto_tsquery` of it: that stems the stem again, and Snowball changes some stems (`releas` →
    /// `relea`, `databas` → `databa`, `consid` from `consider`), so those words counted for nothing and a row
    /// holding only them ranked first with no score (`NULL` sorts first in `DESC`). Measured on
    /// Benchmarks/retrieval (README there, "pgvector on the judged sets"): keyword nDCG@10 0.752 → 0.798 tuning.
    ///
    /// `weighted` is `MATERIALIZED`: referenced once (by the whole-chunk rank alone), PostgreSQL inlined it and
    /// counted every word's document frequency again for every candidate row — on the sample index (2,200
    /// chunks) a median 77 ms a search against 15 ms materialized (Benchmarks/retrieval/README.md, *rows and
    /// records on pgvector*).
    ///
    /// The filter is part of the `WHERE` (``PgvectorFilter``): PostgreSQL applies it while it ranks.
    /// The texts of a restriction's `field in (texts)` (the first such condition; every candidate a text, as
    /// ``PgvectorFilter`` writes it with `?|`): a readable row's list holds one of them. Nil when it has none.
    static func restrictingNames(_ conditions: [SearchFilter], field: String) -> [String]? {
        for condition in conditions {
            guard case .oneOf(let name, let values) = condition, name == field else { continue }
            let texts = values.compactMap { value -> String? in
                if case .string(let text) = value { return text }
                return nil
            }
            if texts.count == values.count { return texts }
        }
        return nil
    }

    func keywordSearch(_ text: String, k: Int, filter searchFilter: SearchFilter?) async throws -> [SearchHit] {
        guard k > 0, !KeywordTokenizer.terms(of: text).isEmpty else { return [] }
        let table = quotedTable
        guard !text.utf8.contains(0) else {
            throw SluiceError(.usage, "pgvector cannot hold U+0000 (NUL) in text: remove it from the query")
        }
        let filter = try searchFilter.map { try PgvectorFilter($0, firstParameter: 5) }
        // Restricted by access control: the corpus and each word's document frequency are the readable rows'.
        let access: (field: String, filter: PgvectorFilter, names: [String]?)? = try {
            guard let searchFilter, let field = settings.accessField,
                case .conditions(let conditions) = AccessRestriction(searchFilter, field: field)
            else { return nil }
            let filter = try PgvectorFilter(.and(conditions), firstParameter: 5 + (filter?.parameters.count ?? 0))
            return (field, filter, Self.restrictingNames(conditions, field: field))
        }()
        let name = tableName
        return try await withCancellableConnection("keyword search \(settings.table)") { connection in
            // The configuration the column was parsed with (a parameter: the comment is the database's text), and
            // whether the table exists, in one catalog query.
            guard let (configuration, units, average) = try Self.searchConfiguration(connection, table: table) else {
                return []
            }
            var corpus = """
                SELECT CASE WHEN c.reltuples > 0 THEN c.reltuples::float8
                    ELSE (SELECT count(*) FROM \(table))::float8 END AS n,
                    greatest(coalesce($4::float8, (SELECT avg(length(text_search)) FROM \(table))), 1) AS average
                FROM pg_class c WHERE c.oid = to_regclass($2)
                """
            var readable = ""
            // The caller's names, a parameter of the restricted corpus when it reads the sums.
            var names: [String] = []
            if let access {
                let keeps = try Self.keepsKeywordLengths(connection, table: name, readers: access.field)
                if keeps, let texts = access.names { names = [PgvectorFilter.arrayLiteral(texts)] }
                let restricted = Self.restrictedCorpus(
                    table: table,
                    sums: Self.keywordLengthsName(table: name).quoted,
                    field: access.field,
                    access: access.filter.sql,
                    keeps: keeps,
                    names: names.isEmpty
                        ? nil : "$\(5 + (filter?.parameters.count ?? 0) + access.filter.parameters.count)::text[]"
                )
                // $2 and $4 are the whole table's corpus's: named all the same, so that every parameter has a type.
                corpus =
                    "SELECT r.n, r.average FROM (\(restricted)) AS r WHERE $2::text IS NOT NULL AND $4::text IS NOT NULL"
                readable = " AND (\(access.filter.sql))"
            }
            // A tsvector's text form ('a' 'b') is a valid tsquery once the spaces between lexemes are ORs.
            let rows = try connection.query(
                """
                WITH words AS (
                    SELECT DISTINCT array_to_tsvector(ARRAY[lexeme])::text::tsquery AS query
                    FROM unnest(tsvector_to_array(to_tsvector($3::regconfig, $1))) AS lexeme),
                corpus AS (\(corpus)),
                weighted AS MATERIALIZED (
                    SELECT words.query, ln(1 + greatest(corpus.n - df.n + 0.5, 0) / (df.n + 0.5)) AS idf
                    FROM words, corpus,
                        LATERAL (SELECT count(*)::float8 AS n FROM \(table)
                            WHERE text_search @@ words.query\(readable)) AS df),
                any_word AS (
                    SELECT replace(strip(to_tsvector($3::regconfig, $1))::text, ' ', ' | ')::tsquery AS query)
                SELECT \(Self.columns), \(Self.keywordRank(units: units)) AS rank
                FROM \(table) t, any_word, corpus
                WHERE any_word.query <> ''::tsquery AND t.text_search @@ any_word.query AND (\(filter?.sql ?? "TRUE"))
                ORDER BY rank DESC, id LIMIT \(k)
                """,
                [text, table, configuration, units ? average : "1"] + (filter?.parameters ?? [])
                    + (access?.filter.parameters ?? []) + names
            )
            return try rows.map { SearchHit(score: Float($0[6] ?? "") ?? 0, record: try Self.record($0)) }
        }
    }
}
