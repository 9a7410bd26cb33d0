import Foundation
import SluiceCore

/// The sums behind the average chunk length that keyword search's length normalization reads
/// (``keywordRank(units:)``), kept with every write instead of counted by a scan of the table at the end of
/// each run: a table `<table>_keyword_lengths (lexemes bigint, chunks bigint)` beside the table, whose rows
/// add up to Σ `length(text_search)` and the number of rows. Statement-level triggers on the table add a row
/// of differences for every `INSERT` (the bulk `COPY` and the staging upsert's new rows), `UPDATE` (its
/// replaced rows) and `DELETE`, from the statement's transition tables, in the write's own transaction; a
/// `TRUNCATE` empties it. So every path that writes the table keeps the sums — Sluice's, adoption's and
/// generations' copies, a user's own statements — and a rolled-back write takes its row back with it.
/// Writers append rows rather than update one, so concurrent writers never wait on each other;
/// ``averageLength(_:table:)`` folds them into one at the end of a run (a cost that grows with the run's
/// statements, not with the table).
///
/// The trigger function is the table's own (`<table>_keyword_lengths()`, in its schema), `SECURITY DEFINER`
/// with its search path pinned: a role that may write the table but not the sums table (a writer granted
/// `INSERT`, `UPDATE`, `DELETE` by the owner) still writes, and `EXECUTE` is revoked from `PUBLIC`, so no other
/// table's trigger can add to the sums. The sums table's comment names the keyword column's version and the
/// table's oid: a column made again (another configuration) or a table made again under the name counts the
/// sums once more, under a lock that keeps writers out while it counts. A role that may not create them (no
/// `CREATE` on the schema) leaves the table as it was, and the end of a run counts the average by a scan, as
/// before.
///
/// With access control on, each row of differences is one readers list's (`readers`: the rows' value of
/// `access.field`, grouped), so that a keyword search restricted by access control counts its corpus — rows and
/// average length — over the rows its caller may read, from the sums alone (``restrictedCorpus(table:sums:field:access:keeps:)``).
/// The field is part of the comment: sums kept for another field (or none) are made again by the next run, and
/// until then a restricted search counts by a scan.
extension PgvectorSink {
    /// The sums table, in the table's schema (``PgvectorIndexName``: within 63 bytes). The trigger function
    /// has the same name (functions and tables have names of their own).
    static func keywordLengthsName(table: PgvectorTableName) -> PgvectorTableName {
        PgvectorTableName(
            schema: table.schema,
            table: PgvectorIndexName(table: table, suffix: "_keyword_lengths").name
        )
    }

    /// The version of the triggers and the function: part of the sums table's comment, so a later version
    /// makes them again.
    static let keywordLengthsVersion =
        "sluice keyword lengths: statement triggers, rows of differences by readers, readers indexed; 3"

    /// The sums table's comment for a table of oid `oid` whose keyword column's comment is `textSearch`, its rows
    /// grouped by the value of `readers` (access control's field; nil: not grouped).
    static func keywordLengthsComment(textSearch: String, oid: String, readers: String?) -> String {
        "\(keywordLengthsVersion); table=\(oid); readers=\(readers.map { PgvectorTableName.literal($0) } ?? "-"); \(textSearch)"
    }

    /// A row's readers as the sums group them: its value of the field `readers`, NULL without one.
    static func readersExpression(_ readers: String?) -> String {
        readers.map { "metadata->\(PgvectorTableName.literal($0))" } ?? "NULL::jsonb"
    }

    /// The trigger function: a row of differences per statement and readers list, from its transition tables,
    /// into `sums` (the sums table's name with its schema, which is also the function's).
    static func keywordLengthsFunction(_ sums: String, readers: String?) -> String {
        let grouped = { (rows: String, sign: String) in
            """
            SELECT \(readersExpression(readers)) AS readers, \(sign)coalesce(sum(length(text_search)), 0) AS lexemes, \
            \(sign)count(*) AS chunks FROM \(rows) GROUP BY 1
            """
        }
        return """
            CREATE OR REPLACE FUNCTION \(sums)() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
            SET search_path = pg_catalog, pg_temp AS $sluice$
            BEGIN
                IF TG_OP = 'INSERT' THEN
                    INSERT INTO \(sums) (readers, lexemes, chunks) \(grouped("sluice_new", ""));
                ELSIF TG_OP = 'DELETE' THEN
                    INSERT INTO \(sums) (readers, lexemes, chunks) \(grouped("sluice_old", "-"));
                ELSIF TG_OP = 'UPDATE' THEN
                    INSERT INTO \(sums) (readers, lexemes, chunks)
                    SELECT d.readers, sum(d.lexemes), sum(d.chunks)
                    FROM (\(grouped("sluice_new", "")) UNION ALL \(grouped("sluice_old", "-"))) AS d
                    GROUP BY d.readers HAVING sum(d.lexemes) <> 0 OR sum(d.chunks) <> 0;
                ELSE
                    DELETE FROM \(sums);
                END IF;
                RETURN NULL;
            END
            $sluice$
            """
    }

    /// The four triggers: `(name, event and transition tables)`.
    static let keywordLengthsTriggers = [
        ("sluice_keyword_lengths_insert", "INSERT", "REFERENCING NEW TABLE AS sluice_new"),
        ("sluice_keyword_lengths_update", "UPDATE", "REFERENCING OLD TABLE AS sluice_old NEW TABLE AS sluice_new"),
        ("sluice_keyword_lengths_delete", "DELETE", "REFERENCING OLD TABLE AS sluice_old"),
        ("sluice_keyword_lengths_truncate", "TRUNCATE", ""),
    ]

    /// The sums table's comment as it should be for `table` now, its rows grouped by `readers`, nil without the
    /// table or its keyword column.
    static func currentKeywordLengthsComment(
        _ connection: PGConnection,
        table: String,
        readers: String?
    ) throws -> String? {
        let row = try connection.query(
            """
            SELECT to_regclass($1)::oid::text, (SELECT col_description(a.attrelid, a.attnum) FROM pg_attribute a
                WHERE a.attrelid = to_regclass($1) AND a.attname = 'text_search' AND NOT a.attisdropped)
            """,
            [table]
        ).first
        guard let oid = row?[0] ?? nil, let textSearch = row?[1] ?? nil else { return nil }
        return keywordLengthsComment(textSearch: textSearch, oid: oid, readers: readers)
    }

    /// Whether the sums of `table` are kept, grouped by `readers` (the sums table's comment is the current one).
    static func keepsKeywordLengths(
        _ connection: PGConnection,
        table name: PgvectorTableName,
        readers: String?
    ) throws -> Bool {
        guard let expected = try currentKeywordLengthsComment(connection, table: name.quoted, readers: readers) else {
            return false
        }
        let comment =
            try connection.query(
                "SELECT obj_description(to_regclass($1), 'pg_class')",
                [keywordLengthsName(table: name).quoted]
            ).first?[0] ?? nil
        return comment == expected
    }

    /// Creates (or makes again, when its comment is not the current one) the sums table, its function and the
    /// triggers, and counts the sums once. Runs in the preparation's transaction, after the keyword column is
    /// made, in a savepoint: a role that may not create them leaves the table as it was.
    static func ensureKeywordLengths(_ connection: PGConnection, table name: PgvectorTableName, readers: String?) throws
    {
        if try keepsKeywordLengths(connection, table: name, readers: readers) { return }
        let table = name.quoted
        // Named with its schema everywhere: the function runs with its search path pinned.
        guard
            let schema = try connection.query(
                "SELECT c.relnamespace::regnamespace::text FROM pg_class c WHERE c.oid = to_regclass($1)",
                [table]
            ).first?[0] ?? nil
        else { return }
        let sums = schema + "." + PgvectorTableName.quote(keywordLengthsName(table: name).table)
        try connection.query("SAVEPOINT sluice_keyword_lengths")
        do {
            try connection.query("CREATE TABLE IF NOT EXISTS \(sums) (lexemes bigint NOT NULL, chunks bigint NOT NULL)")
            try connection.query("ALTER TABLE \(sums) ADD COLUMN IF NOT EXISTS readers jsonb")
            // A restricted search reads the rows of its caller's lists through this (``restrictedCorpus``): with a
            // list a document, the rows are as many as the documents.
            let index = PgvectorTableName.quote(PgvectorIndexName(table: name, suffix: "_keyword_lengths_readers").name)
            try connection.query("CREATE INDEX IF NOT EXISTS \(index) ON \(sums) USING gin (readers)")
            try connection.query(keywordLengthsFunction(sums, readers: readers))
            try connection.query("REVOKE EXECUTE ON FUNCTION \(sums)() FROM PUBLIC")
            for (trigger, event, transitions) in keywordLengthsTriggers {
                try connection.query(
                    """
                    CREATE OR REPLACE TRIGGER \(trigger) AFTER \(event) ON \(table) \(transitions)
                    FOR EACH STATEMENT EXECUTE FUNCTION \(sums)()
                    """
                )
            }
            // Writers wait until the count is committed: none of their rows is counted twice or missed.
            try connection.query("LOCK TABLE \(table) IN SHARE ROW EXCLUSIVE MODE")
            try connection.query("DELETE FROM \(sums)")
            try connection.query(
                """
                INSERT INTO \(sums) (readers, lexemes, chunks)
                SELECT \(readersExpression(readers)), coalesce(sum(length(text_search)), 0), count(*) FROM \(table) GROUP BY 1
                """
            )
            if let comment = try currentKeywordLengthsComment(connection, table: table, readers: readers) {
                try connection.query("COMMENT ON TABLE \(sums) IS \(PgvectorTableName.literal(comment))")
            }
            try connection.query("RELEASE SAVEPOINT sluice_keyword_lengths")
        } catch {
            guard let state = PGConnection.sqlState(of: error) else { throw error }
            try connection.query("ROLLBACK TO SAVEPOINT sluice_keyword_lengths")
            try connection.query("RELEASE SAVEPOINT sluice_keyword_lengths")
            // Only a missing privilege is expected; anything else is a defect to report, not to hide.
            guard state == "42501" else { throw error }
        }
    }

    /// The average `length(text_search)` of `table`'s rows (1 when it has none): from the kept sums, folded
    /// into one row first, or, where they are not kept, by a scan of the table.
    static func averageLength(
        _ connection: PGConnection,
        table name: PgvectorTableName,
        readers: String?
    ) throws
        -> Double?
    {
        let table = name.quoted
        guard try keepsKeywordLengths(connection, table: name, readers: readers) else {
            let average = try connection.query(
                "SELECT coalesce(avg(length(text_search)), 1)::float8::text FROM \(table)"
            ).first?[0]
            return average.flatMap { $0 }.flatMap(Double.init)
        }
        let sums = keywordLengthsName(table: name).quoted
        // One row for every statement (and readers list) since the last run's end: folded into one a readers
        // list, in a transaction of its own (rows of writers still running are not seen, and stay theirs).
        try connection.query(
            """
            WITH taken AS (DELETE FROM \(sums) RETURNING readers, lexemes, chunks)
            INSERT INTO \(sums) (readers, lexemes, chunks)
            SELECT readers, coalesce(sum(lexemes), 0), coalesce(sum(chunks), 0) FROM taken GROUP BY readers
            """
        )
        let total = try connection.query(
            "SELECT coalesce(sum(lexemes), 0)::text, coalesce(sum(chunks), 0)::text FROM \(sums)"
        ).first
        guard let lexemes = (total?[0] ?? nil).flatMap(Double.init),
            let chunks = (total?[1] ?? nil).flatMap(Double.init)
        else { return nil }
        return chunks > 0 ? lexemes / chunks : 1
    }

    /// The `corpus` of a keyword search restricted by access control (`n`: the rows the caller may read,
    /// `average`: their average `length(text_search)`): from the sums when they are kept by `field`'s values
    /// (`keeps`), each readers list's rows of differences checked against `access` (the restriction's SQL, over a
    /// `metadata` holding the field alone), else by a scan of the rows `access` admits.
    ///
    /// `names` (a parameter's SQL, `$n::text[]`): when the restriction holds `field in (texts)` — as `serve`'s does,
    /// the caller's principal and groups — the parameter of those texts, so that only the rows whose lists hold one
    /// of them are read, through the sums' GIN index on `readers` (the restriction implies it: its own SQL is
    /// `metadata->field ?| texts`). Without it every list's row is checked: 36.5 ms over 100,000 lists (a list a
    /// document) against 0.2–0.4 ms over ten (docs/ACCESS.md).
    static func restrictedCorpus(
        table: String,
        sums: String,
        field: String,
        access: String,
        keeps: Bool,
        names: String? = nil
    ) -> String {
        guard keeps else {
            return """
                SELECT count(*)::float8 AS n, greatest(coalesce(avg(length(text_search)), 1), 1)::float8 AS average
                FROM \(table) WHERE (\(access))
                """
        }
        return """
            SELECT coalesce(sum(chunks), 0)::float8 AS n,
                greatest(coalesce(sum(lexemes)::float8 / nullif(sum(chunks), 0), 1), 1)::float8 AS average
            FROM (SELECT CASE WHEN readers IS NULL THEN '{}'::jsonb
                ELSE jsonb_build_object(\(PgvectorTableName.literal(field)), readers) END AS metadata, lexemes, chunks
                FROM \(sums)\(names.map { " WHERE readers ?| \($0)" } ?? "")) AS kept
            WHERE (\(access))
            """
    }

    /// Drops the sums table and its function (the triggers went with the table).
    static func dropKeywordLengths(_ connection: PGConnection, table name: PgvectorTableName) throws {
        let sums = keywordLengthsName(table: name).quoted
        try connection.query("DROP TABLE IF EXISTS \(sums)")
        try connection.query("DROP FUNCTION IF EXISTS \(sums)()")
    }
}
