import Foundation
import SluiceCore

/// The stable name outside readers (psql, LangChain) query while Sluice switches index generations
/// (docs/GENERATIONS.md): a view over the active generation's table, replaced in one transaction, so a
/// reader sees the old table or the new one, never a mix and never no relation at all (PostgreSQL makes a
/// statement that waited on the view's lock look the name up again once the replacing transaction commits).
extension PgvectorSink {
    /// Points the view `view` (`name` or `schema.name`) at this sink's table: drops it and creates it again
    /// in one transaction (a `CREATE OR REPLACE` cannot change a column's type, and another embedder's
    /// dimensions do), with `label` as its comment, which ``viewLabel(_:)`` reads back.
    /// - Returns: false, changing nothing, when this sink's table does not exist yet (no run wrote it).
    /// - Throws: ``SluiceError/Code/configuration`` when `view` names a relation that is not a view (a
    ///   user's table is never dropped); the connection's errors.
    @discardableResult
    package func publishView(_ view: String, label: String) async throws -> Bool {
        guard Self.validIdentifier(view) else {
            throw SluiceError(.configuration, "the view name '\(view)' is not a SQL identifier")
        }
        let quotedView = Self.quotedIdentifier(view)
        let table = quotedTable
        return try await withConnection("publish view \(view)") { connection in
            // Not under the preparation lock: the switch waits for readers' open transactions on the view,
            // and must not hold up other tables' runs meanwhile (changes of one index's generations are
            // serialized by its state lock).
            try Self.committing(connection) {
                guard try Self.describe(connection, table) != nil else { return false }
                let kind =
                    try connection.query(
                        "SELECT relkind::text FROM pg_class WHERE oid = to_regclass($1)",
                        [quotedView]
                    ).first?[0] ?? nil
                if let kind, kind != "v" {
                    throw SluiceError(
                        .configuration,
                        "\(view) exists and is not a view: Sluice keeps a view of that name on the active generation's table (docs/GENERATIONS.md); rename the relation"
                    )
                }
                try connection.query("DROP VIEW IF EXISTS \(quotedView)")
                try connection.query("CREATE VIEW \(quotedView) AS SELECT * FROM \(table)")
                try connection.query(
                    "COMMENT ON VIEW \(quotedView) IS '\(label.replacingOccurrences(of: "'", with: "''"))'"
                )
                return true
            }
        }
    }

    /// The comment ``publishView(_:label:)`` gave the view `view`; nil when there is no such view.
    package func viewLabel(_ view: String) async throws -> String? {
        let quotedView = Self.quotedIdentifier(view)
        return try await withConnection("read view \(view)") { connection in
            try connection.query(
                "SELECT coalesce(obj_description(c.oid, 'pg_class'), '') FROM pg_class c WHERE c.oid = to_regclass($1) AND c.relkind = 'v'",
                [quotedView]
            ).first?[0] ?? nil
        }
    }

    /// The bytes this sink's table takes on the server, with its indexes and TOAST data
    /// (`pg_total_relation_size`): what a copy of it needs (docs/GENERATIONS.md); nil when it does not exist.
    package func totalRelationSize() async throws -> Int? {
        let table = quotedTable
        return try await withConnection("size of \(settings.table)") { connection in
            let rows = try connection.query("SELECT pg_total_relation_size(to_regclass($1))::text", [table])
            guard let first = rows.first, let value = first.first ?? nil else { return nil }
            return Int(value)
        }
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    static func committing<T>(_ connection: PGConnection, _ body: () throws -> T) throws -> T {
        try connection.query("BEGIN")
        do {
            let result = try body()
            try connection.query("COMMIT")
            return result
        } catch {
            _ = try? connection.query("ROLLBACK")
            throw error
        }
    }

    /// `name` or `schema.name` as every statement writes it (quoted, so case-sensitive); a name that is
    /// not valid (``validIdentifier(_:)``) as one identifier.
    static func quotedIdentifier(_ name: String) -> String {
        PgvectorTableName(parsing: name)?.quoted ?? PgvectorTableName.quote(name)
    }
}
