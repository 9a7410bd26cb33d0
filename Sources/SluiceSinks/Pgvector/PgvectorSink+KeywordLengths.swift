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
    static let keywordLengthsVersion = "sluice keyword lengths: statement triggers, rows of differences; 1"

    /// The sums table's comment for a table of oid `oid` whose keyword column's comment is `textSearch`.
    static func keywordLengthsComment(textSearch: String, oid: String) -> String {
        "\(keywordLengthsVersion); table=\(oid); \(textSearch)"
    }

    /// The trigger function: a row of differences per statement, from its transition tables, into `sums` (the
    /// sums table's name with its schema, which is also the function's).
    static func keywordLengthsFunction(_ sums: String) -> String {
        let length = "coalesce(sum(length(text_search)), 0)"
        return """
            CREATE OR REPLACE FUNCTION \(sums)() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
            SET search_path = pg_catalog, pg_temp AS $sluice$
            BEGIN
                IF TG_OP = 'INSERT' THEN
                    INSERT INTO \(sums) SELECT \(length), count(*) FROM sluice_new HAVING count(*) > 0;
                ELSIF TG_OP = 'DELETE' THEN
                    INSERT INTO \(sums) SELECT -\(length), -count(*) FROM sluice_old HAVING count(*) > 0;
                ELSIF TG_OP = 'UPDATE' THEN
                    INSERT INTO \(sums) SELECT n.lexemes - o.lexemes, 0
                    FROM (SELECT \(length) AS lexemes FROM sluice_new) AS n,
                        (SELECT \(length) AS lexemes FROM sluice_old) AS o
                    WHERE n.lexemes <> o.lexemes;
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

    /// The sums table's comment as it should be for `table` now, nil without the table or its keyword column.
    static func currentKeywordLengthsComment(_ connection: PGConnection, table: String) throws -> String? {
        let row = try connection.query(
            """
            SELECT to_regclass($1)::oid::text, (SELECT col_description(a.attrelid, a.attnum) FROM pg_attribute a
                WHERE a.attrelid = to_regclass($1) AND a.attname = 'text_search' AND NOT a.attisdropped)
            """,
            [table]
        ).first
        guard let oid = row?[0] ?? nil, let textSearch = row?[1] ?? nil else { return nil }
        return keywordLengthsComment(textSearch: textSearch, oid: oid)
    }

    /// Whether the sums of `table` are kept (the sums table's comment is the current one).
    static func keepsKeywordLengths(_ connection: PGConnection, table name: PgvectorTableName) throws -> Bool {
        guard let expected = try currentKeywordLengthsComment(connection, table: name.quoted) else { return false }
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
    static func ensureKeywordLengths(_ connection: PGConnection, table name: PgvectorTableName) throws {
        if try keepsKeywordLengths(connection, table: name) { return }
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
            try connection.query(keywordLengthsFunction(sums))
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
                "INSERT INTO \(sums) SELECT coalesce(sum(length(text_search)), 0), count(*) FROM \(table)"
            )
            if let comment = try currentKeywordLengthsComment(connection, table: table) {
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
    static func averageLength(_ connection: PGConnection, table name: PgvectorTableName) throws -> Double? {
        let table = name.quoted
        guard try keepsKeywordLengths(connection, table: name) else {
            let average = try connection.query(
                "SELECT coalesce(avg(length(text_search)), 1)::float8::text FROM \(table)"
            ).first?[0]
            return average.flatMap { $0 }.flatMap(Double.init)
        }
        let sums = keywordLengthsName(table: name).quoted
        // One row for every statement since the last run's end: folded into one, in a transaction of its own
        // (rows of writers still running are not seen, and stay theirs).
        try connection.query(
            """
            WITH taken AS (DELETE FROM \(sums) RETURNING lexemes, chunks)
            INSERT INTO \(sums) SELECT coalesce(sum(lexemes), 0), coalesce(sum(chunks), 0) FROM taken
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

    /// Drops the sums table and its function (the triggers went with the table).
    static func dropKeywordLengths(_ connection: PGConnection, table name: PgvectorTableName) throws {
        let sums = keywordLengthsName(table: name).quoted
        try connection.query("DROP TABLE IF EXISTS \(sums)")
        try connection.query("DROP FUNCTION IF EXISTS \(sums)()")
    }
}
