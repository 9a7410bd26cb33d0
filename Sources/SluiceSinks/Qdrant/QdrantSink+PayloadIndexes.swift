import SluiceCore
import SluiceHTTP

/// The payload indexes Sluice creates in Qdrant: one on each field it filters on, so that a Qdrant in strict mode
/// (`strict_mode_config` with `unindexed_filtering_retrieve` or `unindexed_filtering_update` false, as Qdrant Cloud
/// runs collections) accepts its filters. Such a server answers a filter on a field without an index with 400
/// "Index required but not found for \"<field>\" of one of the following types: [...]".
///
/// The collection's indexes are created by ``prepare(embedder:)`` on every run; the generation records' when their
/// collection is created. A collection made before (by an older Sluice) gets them when a filtered request is
/// refused for want of one: the indexes are created (`PUT /collections/{c}/index?wait=true`, answered 200 again
/// when the index exists with the same schema; a 409 is taken as the same) and the request is sent once more.
extension QdrantSink {
    /// A payload index: the field (a dotted path into the payload) and its schema.
    struct PayloadIndex: Encodable, Sendable {
        var field_name: String
        var field_schema: String
    }

    /// The collection's: `document_key` (a document's deletes and read-back, `document_key` filters), `ordinal`
    /// and `metadata.folders` (`document_key ^= "folder/"` in `sluice search`). Other metadata fields a search
    /// filters on need an index made by hand on a strict server (docs/STORES.md).
    static let collectionIndexes = [
        PayloadIndex(field_name: "document_key", field_schema: "keyword"),
        PayloadIndex(field_name: "ordinal", field_schema: "integer"),
        PayloadIndex(field_name: "metadata.folders", field_schema: "keyword"),
    ]

    /// The generation records': `key` and `version`, which a read of a record's versions and the insert-once
    /// write's `update_filter` filter on.
    static let generationRecordIndexes = [
        PayloadIndex(field_name: "key", field_schema: "keyword"),
        PayloadIndex(field_name: "version", field_schema: "integer"),
    ]

    /// How Qdrant in strict mode begins its refusal of a filter on a field without an index.
    static let missingIndexRefusal = "Index required but not found"

    /// Creates `indexes` on the collection at `path`; an index that exists stays as it is.
    /// - Returns: false when the collection does not exist.
    @discardableResult
    func createPayloadIndexes(_ indexes: [PayloadIndex], at path: String) async throws -> Bool {
        for index in indexes {
            let response = try await http.send(
                "PUT",
                "\(path)/index?wait=true",
                json: try StoreHTTP.encode(index),
                accepting: [404, 409]
            )
            if response.status == 404 { return false }
        }
        return true
    }

    /// Runs `request`; when Qdrant refuses it for a missing payload index, creates `indexes` on the collection at
    /// `path` and runs it once more. When the indexes cannot be created (a read-only key), the refusal is thrown.
    @discardableResult
    func indexingOnRefusal<T>(
        _ indexes: [PayloadIndex],
        at path: String,
        _ request: () async throws -> T
    ) async throws -> T {
        do {
            return try await request()
        } catch let refusal as SluiceError
            where refusal.code == .sinkFailed && refusal.message.contains(Self.missingIndexRefusal)
        {
            do {
                try await createPayloadIndexes(indexes, at: path)
            } catch {
                throw refusal
            }
            return try await request()
        }
    }
}
