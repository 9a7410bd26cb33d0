import SluiceCore

/// Reading vectors back for a new or lost state (``VectorSink/storedVectors(ofDocument:)``): one query on
/// the table's `document_key` index per document.
extension PgvectorSink {
    public func storedVectors(ofDocument key: String) async throws -> [VectorID: [Float]]? {
        let table = quotedTable
        let rawTable = settings.table
        return try await withConnection("read back the vectors of a document in \(rawTable)") { connection in
            guard try Self.describe(connection, table) != nil else { return [:] }
            let rows = try connection.query("SELECT id, embedding FROM \(table) WHERE document_key = $1", [key])
            var out: [VectorID: [Float]] = [:]
            for row in rows {
                guard row.count >= 2, let id = row[0], let embedding = row[1] else {
                    throw SluiceError(.sinkFailed, "unexpected row shape from PostgreSQL")
                }
                out[VectorID(rawValue: id)] = PgvectorCopy.parseVector(embedding)
            }
            return out
        }
    }
}
