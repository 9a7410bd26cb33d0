import Foundation
import SluiceCore
import Synchronization

/// Writing, deleting, reading and searching rows.
extension PgvectorSink {
    package static let columns = "id, document_key, ordinal, text, metadata, embedding"

    public func upsert(_ records: [VectorRecord]) async throws {
        guard !records.isEmpty else { return }
        // The last record wins when one id appears twice (ON CONFLICT may touch a row once per statement).
        var seen = Set<VectorID>()
        let unique = records.reversed().filter { seen.insert($0.id).inserted }.reversed() as [VectorRecord]
        for batch in RecordBatches.split(
            unique,
            maxCount: .max,
            maxBytes: settings.maxBatchBytes,
            size: RecordBatches.estimatedJSONBytes
        ) {
            try await write(Array(batch))
        }
    }

    private func write(_ records: [VectorRecord]) async throws {
        let table = quotedTable
        let (bulk, half) = runState.withLock { ($0.bulk, $0.columnType == "halfvec") }
        try await withConnection("upsert into \(settings.table)") { connection in
            // Encoded on the sink's thread, not on Swift's cooperative pool.
            let payload = PgvectorCopy.encodeBinary(records, half: half)
            if bulk {
                // The bulk path: straight into the table, one transaction. An id that is already there
                // (a batch re-sent after a lost acknowledgement) fails it with 23505: use the staging path.
                do {
                    try connection.query("BEGIN")
                    try connection.copyIn("COPY \(table) (\(Self.columns)) FROM STDIN WITH (FORMAT binary)", payload)
                    try connection.query("COMMIT")
                    return
                } catch {
                    _ = try? connection.query("ROLLBACK")
                    guard PGConnection.sqlState(of: error) == "23505" else { throw error }
                }
            }
            try connection.query("BEGIN")
            do {
                try connection.query(
                    "CREATE TEMP TABLE IF NOT EXISTS sluice_staging (LIKE \(table) INCLUDING DEFAULTS) ON COMMIT DELETE ROWS"
                )
                try connection.copyIn("COPY sluice_staging (\(Self.columns)) FROM STDIN WITH (FORMAT binary)", payload)
                try connection.query(
                    """
                    INSERT INTO \(table) (\(Self.columns)) SELECT \(Self.columns) FROM sluice_staging
                    ON CONFLICT (id) DO UPDATE SET document_key = EXCLUDED.document_key, ordinal = EXCLUDED.ordinal,
                    text = EXCLUDED.text, metadata = EXCLUDED.metadata, embedding = EXCLUDED.embedding
                    """
                )
                try connection.query("COMMIT")
            } catch {
                _ = try? connection.query("ROLLBACK")
                throw error
            }
        }
    }

    public func delete(_ ids: [VectorID]) async throws {
        guard !ids.isEmpty else { return }
        let table = quotedTable
        var start = 0
        while start < ids.count {
            let end = min(start + 10_000, ids.count)
            let literal = PgvectorCopy.arrayLiteral(ids[start..<end])
            try await withConnection("delete from \(settings.table)") { connection in
                try connection.query("DELETE FROM \(table) WHERE id = ANY($1::text[])", [literal])
            }
            start = end
        }
    }

    public func count() async throws -> Int {
        let table = quotedTable
        let rawTable = settings.table
        return try await withConnection("count \(rawTable)") { connection in
            guard try Self.describe(connection, table) != nil else { return 0 }
            return try Int(connection.query("SELECT count(*) FROM \(table)")[0][0] ?? "0") ?? 0
        }
    }

    public func search(_ vector: [Float], k: Int) async throws -> [SearchHit] {
        try await search(SearchRequest(vector: vector, k: k))
    }

    public func exportAll(_ body: @Sendable (VectorRecord) throws -> Void) async throws {
        let table = quotedTable
        let rawTable = settings.table
        var after = ""
        while true {
            let cursor = after
            // Keyset pages in byte order of the ids (COLLATE "C"), so the export is sorted like the other stores'.
            let page = try await withConnection("export \(rawTable)") { connection -> [VectorRecord] in
                guard try Self.describe(connection, table) != nil else { return [] }
                let rows = try connection.query(
                    "SELECT \(Self.columns) FROM \(table) WHERE id COLLATE \"C\" > $1 ORDER BY id COLLATE \"C\" LIMIT 2000",
                    [cursor]
                )
                return try rows.map(Self.record)
            }
            for record in page { try body(record) }
            guard let last = page.last else { return }
            after = last.id.rawValue
        }
    }

    public func listIDs() async throws -> Set<VectorID>? {
        let table = quotedTable
        let rawTable = settings.table
        return try await withConnection("list ids of \(rawTable)") { connection in
            guard try Self.describe(connection, table) != nil else { return [] }
            return Set(
                try connection.query("SELECT id FROM \(table)").compactMap { $0[0].map(VectorID.init(rawValue:)) }
            )
        }
    }

    public func existing(_ ids: [VectorID]) async throws -> Set<VectorID> {
        guard !ids.isEmpty else { return [] }
        let table = quotedTable
        let rawTable = settings.table
        let literal = PgvectorCopy.arrayLiteral(ids[...])
        return try await withConnection("look up ids in \(rawTable)") { connection in
            guard try Self.describe(connection, table) != nil else { return [] }
            let rows = try connection.query("SELECT id FROM \(table) WHERE id = ANY($1::text[])", [literal])
            return Set(rows.compactMap { $0[0].map(VectorID.init(rawValue:)) })
        }
    }

    /// A row of `columns` (id, document_key, ordinal, text, metadata, embedding) as a record.
    static func record(_ row: [String?]) throws -> VectorRecord {
        guard row.count >= 6, let id = row[0], let key = row[1], let ordinal = row[2].flatMap({ Int($0) }),
            let text = row[3]
        else {
            throw SluiceError(.sinkFailed, "unexpected row shape from PostgreSQL")
        }
        var metadata: [String: MetadataValue] = [:]
        if let json = row[4], let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] {
            for (name, value) in object { metadata[name] = MetadataValue(json: value) }
        }
        return VectorRecord(
            id: VectorID(rawValue: id),
            documentKey: key,
            ordinal: ordinal,
            text: text,
            vector: PgvectorCopy.parseVector(row[5] ?? "[]"),
            metadata: metadata
        )
    }
}
