import SluiceCore

/// The names of a pgvector table's indexes (`_embedding_hnsw`, `_text_search`, `_document_key` added to the
/// table's name), kept within PostgreSQL's 63 bytes (NAMEDATALEN) and distinct.
///
/// The server cuts a longer identifier to its first 63 bytes: the three indexes of a table of 62 bytes were
/// all named `<table>_`, a generation's table of 63 bytes (`<table>_g2`) gave its indexes its own name, and
/// `CREATE INDEX IF NOT EXISTS` then skipped them in silence (`PgvectorIndexNamesTests`). A name that fits
/// stays as every version wrote it; a longer one is the table's name cut short (at a character), `_`, eight
/// hex digits of the XXH3-128 of the whole name, then the suffix. An index an older version made under the
/// name the server cut, found on this very table, is renamed to the new name: an upgrade, not a second index.
struct PgvectorIndexName: Equatable {
    /// The name to create and look for.
    var name: String
    /// The name the server made of `<table><suffix>` when that was longer than 63 bytes; nil when it fits.
    var legacy: String?

    init(table: PgvectorTableName, suffix: String) {
        (name, legacy) = table.fitting(suffix)
    }

    /// `text`'s longest prefix of at most `bytes` bytes that ends at a character (as the server cuts).
    static func clipped(_ text: String, to bytes: Int) -> String {
        var out = ""
        var used = 0
        for scalar in text.unicodeScalars {
            let size = String(scalar).utf8.count
            guard used + size <= bytes else { break }
            out.unicodeScalars.append(scalar)
            used += size
        }
        return out
    }

    /// Renames the index an older version named ``legacy`` to ``name`` when `table` has one by that name (a
    /// relation of that name that is not this table's index is left alone).
    func adoptLegacy(_ connection: PGConnection, table: PgvectorTableName) throws {
        guard let legacy else { return }
        let found = try connection.query(
            """
            SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
            WHERE i.indrelid = to_regclass($1) AND c.relname = $2
            """,
            [table.quoted, legacy]
        )
        guard !found.isEmpty else { return }
        let schema = table.quotedSchema.map { $0 + "." } ?? ""
        try connection.query(
            "ALTER INDEX \(schema)\(PgvectorTableName.quote(legacy)) RENAME TO \(PgvectorTableName.quote(name))"
        )
    }

    /// Whether `table` has this index, under ``name`` or (renamed to it now) under ``legacy``.
    func exists(_ connection: PGConnection, table: PgvectorTableName) throws -> Bool {
        try adoptLegacy(connection, table: table)
        return try PgvectorSink.hasIndex(connection, table: table.quoted, named: name)
    }

    /// `CREATE INDEX IF NOT EXISTS name ON table …` with `definition`, unless ``exists(_:table:)``: the lookup
    /// comes first because `CREATE INDEX IF NOT EXISTS` needs CREATE on the schema even when the index is
    /// there, which a role that owns the table but may not create in its schema lacks.
    func create(_ connection: PGConnection, table: PgvectorTableName, _ definition: String) throws {
        if try exists(connection, table: table) { return }
        try connection.query(
            "CREATE INDEX IF NOT EXISTS \(PgvectorTableName.quote(name)) ON \(table.quoted) \(definition)"
        )
    }
}
