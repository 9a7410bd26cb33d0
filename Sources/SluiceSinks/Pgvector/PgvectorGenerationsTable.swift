import SluiceCore

/// The name of a sharded deployment's generations table, `<table>_generations` beside the original table
/// (``PgvectorSink`` as ``SharedGenerationRecords``), kept within PostgreSQL's 63 bytes and distinct as the
/// indexes' names are (``PgvectorTableName/fitting(_:)``).
///
/// Older versions let the server cut a longer name to 63 bytes: past 51 bytes of table name the records went
/// to `<table>_genera…`, and a table of 63 bytes had its own name for it, so `CREATE TABLE IF NOT EXISTS` was
/// skipped and every write failed (`PgvectorGenerationsTableTests`). A table an older version made under the
/// cut name, with the generations table's columns, is read where it is and renamed at the next write: an
/// upgrade, not a second table. A relation of that name with other columns (the vectors' own table) is never
/// taken for it.
struct PgvectorGenerationsTable: Equatable {
    /// The table to create and look for.
    var name: PgvectorTableName
    /// The table an older version made when the name did not fit; nil when it fits.
    var legacy: PgvectorTableName?

    init(table: PgvectorTableName) {
        let (name, legacy) = table.fitting("_generations")
        self.name = PgvectorTableName(schema: table.schema, table: name)
        self.legacy = legacy.map { PgvectorTableName(schema: table.schema, table: $0) }
    }

    /// The table that holds the records now, quoted: ``name`` when it exists, else an older version's
    /// ``legacy`` when that is a generations table; nil when there is none yet.
    func existing(_ connection: PGConnection) throws -> String? {
        if try connection.query("SELECT to_regclass($1) IS NOT NULL", [name.quoted]).first?[0] == "t" {
            return name.quoted
        }
        guard let legacy, try Self.isGenerationsTable(connection, legacy) else { return nil }
        return legacy.quoted
    }

    /// Makes ``name`` the table: renames an older version's ``legacy`` to it when only that exists, else
    /// creates it when it does not exist. Call it inside the preparation's lock.
    func ensure(_ connection: PGConnection) throws {
        if let legacy, try connection.query("SELECT to_regclass($1) IS NULL", [name.quoted]).first?[0] == "t",
            try Self.isGenerationsTable(connection, legacy)
        {
            try connection.query("ALTER TABLE \(legacy.quoted) RENAME TO \(PgvectorTableName.quote(name.table))")
            return
        }
        try connection.query(
            "CREATE TABLE IF NOT EXISTS \(name.quoted) (key text PRIMARY KEY, value text NOT NULL, version bigint NOT NULL)"
        )
    }

    /// Whether `table` is an ordinary table with exactly the generations table's columns.
    static func isGenerationsTable(_ connection: PGConnection, _ table: PgvectorTableName) throws -> Bool {
        try connection.query(
            """
            SELECT (SELECT relkind = 'r' FROM pg_class WHERE oid = to_regclass($1))
              AND (SELECT string_agg(attname::text, ',' ORDER BY attname::text) FROM pg_attribute
                   WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped) = 'key,value,version'
            """,
            [table.quoted]
        )
        .first?[0] == "t"
    }
}
