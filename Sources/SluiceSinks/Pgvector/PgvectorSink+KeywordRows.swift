import Foundation
import SluiceCore

/// Rows and records scored on their own in pgvector's keyword search, as in the local store
/// (`KeywordIndex+Units.swift`): each row of a table chunk (CSV, TSV, XLSX, ODS) and each record of a JSON or
/// JSON Lines chunk is a `tsvector` of its own — its lines with the chunk's title (or file name) and headings —
/// in the generated column `text_search_units tsvector[]` (NULL for every other chunk, and for a chunk of one
/// unit), and such a chunk ranks as its best unit, each unit weighted by BM25's length normalization
/// (``keywordRank(units:)``): `ts_rank` has no length in it, so a unit alone scored as its chunk did, and a
/// short row stayed below long prose chunks holding more of the query's common words.
///
/// The units are cut in SQL by an immutable function in the table's schema (``keywordUnitsFunction(table:)``),
/// by the rules of `KeywordIndex.units(of:)` (the tests hold the two to the same cases): a table's non-blank
/// lines; a JSON chunk's records, each starting at a line that opens with `$` after a blank line; lines with
/// no letter or digit are in no unit; a chunk left with fewer than two units is scored whole. A generated
/// column rather than a table of rows, or units written by Sluice: PostgreSQL computes it in every write's
/// own transaction (the bulk `COPY`, the staging upsert, adoption's and generations' copies), a replaced or
/// deleted chunk's rows go with its row, and a table of the older shape gains it with one `ALTER TABLE`,
/// without reading a row back or embedding anything again.
extension PgvectorSink {
    /// The function's name as statements write it, in the table's schema (the search path's first for a table
    /// without one), as ``foldingConfiguration(table:)``.
    static func keywordUnitsFunction(table: PgvectorTableName) -> String {
        (table.quotedSchema.map { $0 + "." } ?? "") + "sluice_keyword_units"
    }

    /// The function's signature, for `to_regprocedure`.
    static func keywordUnitsSignature(table: PgvectorTableName) -> String {
        keywordUnitsFunction(table: table) + "(regconfig, text, text, text)"
    }

    /// The function's comment: the version of the rules it cuts by. A function with another comment is
    /// replaced, and a column made by another version is made again.
    static let keywordUnitsVersion = "sluice keyword units: rows by line, records at a blank line before $; 1"

    /// The formats whose chunks are cut into units, as a SQL list (`KeywordIndex.tableFormats` and
    /// `recordFormats`).
    static var unitFormatsList: String {
        KeywordIndex.tableFormats.union(KeywordIndex.recordFormats).sorted().map { PgvectorTableName.literal($0) }
            .joined(separator: ", ")
    }

    /// The function: `(configuration, text, format, context)` → each unit's `tsvector` (its lines, then the
    /// context), NULL when fewer than two units.
    static func keywordUnitsDefinition(table: PgvectorTableName) -> String {
        let tables = KeywordIndex.tableFormats.sorted().map { PgvectorTableName.literal($0) }.joined(separator: ", ")
        return """
            CREATE OR REPLACE FUNCTION \(keywordUnitsFunction(table: table))(\
            configuration regconfig, body text, format text, context text)
            RETURNS tsvector[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $sluice$
            SELECT CASE WHEN count(*) > 1
                THEN array_agg(to_tsvector(configuration, unit || E'\\n' || context) ORDER BY number) END
            FROM (
                SELECT number, string_agg(line, E'\\n' ORDER BY position) AS unit
                FROM (
                    SELECT position, line, blank, count(*) FILTER (WHERE NOT blank AND (format IN (\(tables))
                        OR (after_blank AND starts_with(line, '$')))) OVER (ORDER BY position) AS number
                    FROM (
                        SELECT position, line, line ~ '^[[:space:]]*$' AS blank,
                            coalesce(lag(line ~ '^[[:space:]]*$') OVER (ORDER BY position), true) AS after_blank
                        FROM unnest(string_to_array(body, E'\\n')) WITH ORDINALITY AS lines(line, position)
                    ) AS lines
                ) AS numbered
                WHERE NOT blank
                GROUP BY number
            ) AS units
            WHERE unit ~ '[[:alnum:]]'
            $sluice$
            """
    }

    /// The generated column's expression, parsed with `configuration`; the function is called for table and
    /// JSON chunks only.
    static func keywordUnitsExpression(_ configuration: String, table: PgvectorTableName) -> String {
        """
        CASE WHEN metadata->>'format' IN (\(unitFormatsList)) THEN \(keywordUnitsFunction(table: table))(\
        \(PgvectorTableName.literal(configuration))::regconfig, text, metadata->>'format', \(textSearchContext)) END
        """
    }

    /// The column's comment: the units' version and the configuration they were parsed with (which must be
    /// the `text_search` column's for the query's words to match).
    static func keywordUnitsColumnVersion(_ configuration: String) -> String {
        "sluice text_search_units: \(keywordUnitsVersion); configuration=\(configuration)"
    }

    /// Adds (or makes again, when its comment names other rules or another configuration) the units column,
    /// creating or replacing the function first when it is missing or older. Runs in the preparation's
    /// transaction, in a savepoint: a role that may not create the function (no `CREATE` on the schema) or
    /// alter the table leaves the table as it was, and keyword search scores those chunks whole.
    /// - Returns: why rows are not scored on their own, nil when they are.
    static func ensureKeywordRows(
        _ connection: PGConnection,
        table name: PgvectorTableName,
        configuration: String
    ) throws -> String? {
        let table = name.quoted
        let version = keywordUnitsColumnVersion(configuration)
        if try columnComment(connection, table: table, column: "text_search_units") == version { return nil }
        try connection.query("SAVEPOINT sluice_keyword_rows")
        do {
            let function =
                try connection.query(
                    "SELECT coalesce(obj_description(to_regprocedure($1), 'pg_proc'), '')",
                    [keywordUnitsSignature(table: name)]
                ).first?[0] ?? nil
            if function != keywordUnitsVersion {
                try connection.query(keywordUnitsDefinition(table: name))
                try connection.query(
                    "COMMENT ON FUNCTION \(keywordUnitsSignature(table: name)) IS \(PgvectorTableName.literal(keywordUnitsVersion))"
                )
            }
            try connection.query("ALTER TABLE \(table) DROP COLUMN IF EXISTS text_search_units")
            try connection.query(
                """
                ALTER TABLE \(table) ADD COLUMN text_search_units tsvector[]
                GENERATED ALWAYS AS (\(keywordUnitsExpression(configuration, table: name))) STORED
                """
            )
            try connection.query(
                "COMMENT ON COLUMN \(table).text_search_units IS \(PgvectorTableName.literal(version))"
            )
            try connection.query("RELEASE SAVEPOINT sluice_keyword_rows")
            return nil
        } catch {
            guard let state = PGConnection.sqlState(of: error) else { throw error }
            try connection.query("ROLLBACK TO SAVEPOINT sluice_keyword_rows")
            try connection.query("RELEASE SAVEPOINT sluice_keyword_rows")
            // Only a missing privilege is expected; anything else is a defect to report, not to hide.
            guard state == "42501" else { throw error }
            return keywordRowsFallbackMessage(error)
        }
    }

    /// What the log, `sink info` and `sluice check` say when rows are not scored on their own.
    static func keywordRowsFallbackMessage(_ error: (any Error)?) -> String {
        let reason =
            error.map { "\(($0 as? SluiceError)?.message ?? "\($0)")" }
            ?? "the table has no current text_search_units column"
        return
            "keyword search scores table rows and JSON records whole, not each on its own (\(reason)); a role "
            + "that owns the table and may CREATE in its schema adds them on the next run (nothing is embedded "
            + "again)"
    }

    /// A column's comment, nil without the column.
    static func columnComment(_ connection: PGConnection, table: String, column: String) throws -> String? {
        try connection.query(
            """
            SELECT coalesce(col_description(attrelid, attnum), '') FROM pg_attribute
            WHERE attrelid = to_regclass($1) AND attname = $2 AND NOT attisdropped
            """,
            [table, column]
        ).first?[0] ?? nil
    }

    /// Why keyword search does not score rows on their own on this table, nil when it does or when there is
    /// no keyword column at all: for `sink info`.
    static func keywordRowsFallback(_ connection: PGConnection, table: String) throws -> String? {
        guard let configuration = try columnConfiguration(connection, table: table) else { return nil }
        let comment = try columnComment(connection, table: table, column: "text_search_units")
        return comment == keywordUnitsColumnVersion(configuration) ? nil : keywordRowsFallbackMessage(nil)
    }

    /// The rank of a row `t` over the `weighted` words (`query`, `idf`): Σ idf · `ts_rank` over the words it
    /// holds; for a table or JSON chunk (when `units`, the table's units column being current) the best of its
    /// units', each unit's sum weighted by BM25's length normalization (k1 and b as the local store's,
    /// ``BM25``): (k1 + 1) / (1 + k1 · (1 − b + b · length / `corpus.average`)), its length and the average
    /// chunk's in distinct lexemes. `ts_rank` (normalization 0) has no length in it: scored whole or by
    /// units alone, a table chunk ranked as before below long prose chunks holding more of the query's words
    /// (Benchmarks/retrieval `q060`: the same score either way); weighted, a short row holding them ranks as
    /// BM25 ranks a short text. Prose chunks keep their rank exactly.
    static func keywordRank(units: Bool) -> String {
        let whole = """
            coalesce((SELECT sum(w.idf * ts_rank(t.text_search, w.query)) FROM weighted w \
            WHERE t.text_search @@ w.query), 0)
            """
        guard units else { return whole }
        let bm25 = BM25()
        return """
            CASE WHEN t.text_search_units IS NULL THEN \(whole) ELSE \
            coalesce((SELECT max(s.rank) FROM unnest(t.text_search_units) AS u(vector), \
            LATERAL (SELECT sum(w.idf * ts_rank(u.vector, w.query)) * \(bm25.k1 + 1) / (1 + \(bm25.k1) * \
            (\(1 - bm25.b) + \(bm25.b) * length(u.vector) / corpus.average)) AS rank FROM weighted w \
            WHERE u.vector @@ w.query) AS s), 0) END
            """
    }

    /// The index comment that keeps the average chunk's length in distinct lexemes for the units' weight
    /// (``keywordRank(units:)``), written at the end of every run (``recordAverageLength(_:table:indexName:readers:)``).
    static let averageLengthPrefix = "sluice keyword average length="

    /// Keeps the average length of the rows' `text_search` in the keyword index's comment, as `ANALYZE` keeps
    /// the row count the idf reads: from the sums the table's triggers keep (``averageLength(_:table:)``,
    /// `PgvectorSink+KeywordLengths.swift`), or counted by a scan where they are not kept. A role that may not
    /// read the sums or comment on the index (a writer that does not own the table) leaves it, and searches
    /// count it themselves (a scan of the column).
    static func recordAverageLength(
        _ connection: PGConnection,
        table name: PgvectorTableName,
        indexName: String,
        readers: String? = nil
    ) throws {
        let table = name.quoted
        guard try hasIndex(connection, table: table, named: indexName) else { return }
        do {
            guard let value = try averageLength(connection, table: name, readers: readers) else { return }
            let schema =
                try connection.query(
                    "SELECT quote_ident(n.nspname) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass($1)",
                    [table]
                ).first?[0] ?? nil
            let index = (schema.map { $0 + "." } ?? "") + PgvectorTableName.quote(indexName)
            try connection.query(
                "COMMENT ON INDEX \(index) IS \(PgvectorTableName.literal(averageLengthPrefix + String(value)))"
            )
        } catch {
            guard PGConnection.sqlState(of: error) == "42501" else { throw error }
        }
    }
}
