import Foundation
import SluiceCore
import Synchronization

/// Accent folding in pgvector's keyword search, as the local store's keyword index folds
/// (`KeywordTokenizer+Folding.swift`): `bolivar` finds `Bolívar`, `cafe` finds `café`. A text search
/// configuration copied from `english` runs PostgreSQL's `unaccent` dictionary before `english_stem` on the
/// words with letters beyond ASCII; words in ASCII (codes such as `DEVRANDOM_WAIT`) and numbers such as
/// `5.6.1` are parsed as before. Where the extension cannot be created (not installed, or no privilege),
/// keyword search stays on `english`, and says so (``textSearchFallback``).
extension PgvectorSink {
    /// The folding configuration's name as statements write it, in the table's schema (the search path's
    /// first for a table without one): the schema is the name's own part, so a dot inside a quoted name
    /// (`"my.schema"`, `"my.table"`) is part of it, never the end of the schema.
    static func foldingConfiguration(table: PgvectorTableName) -> String {
        (table.quotedSchema.map { $0 + "." } ?? "") + "sluice_english_unaccent"
    }

    /// The parser's token types that can hold letters beyond ASCII (`word`, and the parts of hyphenated
    /// words): `english` maps them, as the ASCII ones, to `english_stem` alone.
    static let foldedTokenTypes = "word, hword, hword_part"

    /// The configuration the generated column and the queries use: ``foldingConfiguration(table:)``,
    /// created here if it does not exist yet (with the `unaccent` extension), or `english` with the reason
    /// folding is off. Runs under the preparation lock (``serializingPreparation(_:_:)``): shards starting
    /// together create it once. The creation runs in a savepoint, so a missing extension or privilege
    /// leaves the preparation's transaction usable.
    static func ensureFoldingConfiguration(
        _ connection: PGConnection,
        table: PgvectorTableName
    ) throws -> (configuration: String, fallback: String?) {
        let name = foldingConfiguration(table: table)
        // The schema a `CREATE` of the name makes it in: the table's (bound, quoted), or the search path's
        // first.
        let existing = try connection.query(
            """
            SELECT count(*) FROM pg_ts_config WHERE cfgname = 'sluice_english_unaccent' AND cfgnamespace =
                CASE WHEN $1::text IS NULL THEN (SELECT oid FROM pg_namespace WHERE nspname = current_schema())
                ELSE to_regnamespace($1) END
            """,
            [table.quotedSchema]
        )
        if existing.first?[0] != "0" { return (name, nil) }
        try connection.query("SAVEPOINT sluice_folding")
        do {
            try connection.query("CREATE EXTENSION IF NOT EXISTS unaccent")
            let schema =
                try connection.query(
                    """
                    SELECT quote_ident(n.nspname) FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
                    WHERE e.extname = 'unaccent'
                    """
                ).first?[0] ?? "public"
            try connection.query("CREATE TEXT SEARCH CONFIGURATION \(name) (COPY = pg_catalog.english)")
            try connection.query(
                """
                ALTER TEXT SEARCH CONFIGURATION \(name)
                ALTER MAPPING FOR \(foldedTokenTypes) WITH \(schema).unaccent, english_stem
                """
            )
            try connection.query("RELEASE SAVEPOINT sluice_folding")
            return (name, nil)
        } catch {
            guard PGConnection.sqlState(of: error) != nil else { throw error }
            try connection.query("ROLLBACK TO SAVEPOINT sluice_folding")
            try connection.query("RELEASE SAVEPOINT sluice_folding")
            return ("english", Self.fallbackMessage(error))
        }
    }

    /// What the log and `sluice check` say when keyword search cannot fold accents.
    static func fallbackMessage(_ error: (any Error)?) -> String {
        let reason =
            error.map { "the unaccent extension could not be created: \(($0 as? SluiceError)?.message ?? "\($0)")" }
            ?? "the keyword column is on english"
        return
            "keyword search does not fold accents (\(reason)); with the unaccent extension (a database owner "
            + "can run CREATE EXTENSION unaccent) the next run folds them"
    }

    /// The configuration the table's column was made with, from its comment (``textSearchVersion(_:)``);
    /// `english` for a column made before accents were folded, nil without a column.
    static func columnConfiguration(_ connection: PGConnection, table: String) throws -> String? {
        try textSearchComment(connection, table: table).map(configuration(fromComment:))
    }

    /// The configuration a column's comment names; `english` for a comment from before accents were folded.
    static func configuration(fromComment comment: String) -> String {
        guard let range = comment.range(of: "; configuration=") else { return "english" }
        return String(comment[range.upperBound...])
    }

    /// For a search, in one catalog query: nil when the table does not exist, else the configuration its
    /// keyword column was parsed with (`english` without a comment naming one), and whether its units column
    /// (`PgvectorSink+KeywordRows.swift`) is current for that configuration, with the average chunk length the
    /// last run recorded (nil when none did).
    static func searchConfiguration(
        _ connection: PGConnection,
        table: String
    ) throws -> (configuration: String, units: Bool, averageLength: String?)? {
        let row = try connection.query(
            """
            SELECT c.oid IS NOT NULL, (SELECT coalesce(col_description(a.attrelid, a.attnum), '') FROM pg_attribute a
                WHERE a.attrelid = c.oid AND a.attname = 'text_search' AND NOT a.attisdropped),
                (SELECT coalesce(col_description(a.attrelid, a.attnum), '') FROM pg_attribute a
                WHERE a.attrelid = c.oid AND a.attname = 'text_search_units' AND NOT a.attisdropped),
                (SELECT substr(d.description, length($2) + 1) FROM pg_index i JOIN pg_description d
                ON d.objoid = i.indexrelid AND d.classoid = 'pg_class'::regclass AND d.objsubid = 0
                WHERE i.indrelid = c.oid AND starts_with(d.description, $2) LIMIT 1)
            FROM (SELECT to_regclass($1) AS oid) c
            """,
            [table, averageLengthPrefix]
        ).first
        guard let row, row[0] == "t" else { return nil }
        let configuration = configuration(fromComment: row[1] ?? "")
        let average = row[3].flatMap(Double.init).map { String($0) }
        return (configuration, row[2] == keywordUnitsColumnVersion(configuration), average)
    }

    /// The generated column's comment, nil without the column.
    static func textSearchComment(_ connection: PGConnection, table: String) throws -> String? {
        try columnComment(connection, table: table, column: "text_search")
    }

    /// Why keyword search does not fold accents on this table, nil when it does (or there is no column):
    /// for `sink info` and `sluice check`.
    static func textSearchFallback(_ connection: PGConnection, table: String) throws -> String? {
        guard let configuration = try columnConfiguration(connection, table: table), configuration == "english"
        else { return nil }
        return fallbackMessage(nil)
    }
}

extension PgvectorSink {
    /// Why the last ``prepare(embedder:)`` could not fold accents in keyword search, or score table rows and
    /// JSON records on their own, nil when it could both.
    public var preparationNotice: String? {
        runState.withLock { state in
            let notices = [state.textSearchFallback, state.keywordRowsFallback].compactMap { $0 }
            return notices.isEmpty ? nil : notices.joined(separator: "; ")
        }
    }
}
