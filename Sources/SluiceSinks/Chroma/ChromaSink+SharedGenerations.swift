import Foundation
import SluiceCore
import SluiceHTTP

/// The records of a sharded deployment's index generations (``SharedGenerationRecords``) in Chroma: the
/// collection `<collection>_generations` beside the original generation's, a record per version of a key
/// (``InsertOnceRecordStore``), its value the record's document and `key`, `version` and `writer` its
/// metadata, with a one-number embedding (Chroma stores none without one).
///
/// Chroma has no conditional write, but its `add` of an id that exists leaves the record there as it is and
/// answers success (chroma 1.5.9, checked on the real server: 16 concurrent `add`s of one id, each read back,
/// all saw the same one writer's record): the insert-once write ``InsertOnceRecordStore`` builds on.
extension ChromaSink: InsertOnceRecordStore {
    /// `<collection>_generations`.
    var generationRecordsCollection: String { settings.collection + "_generations" }

    /// The highest version of each record read from this collection, in this process.
    package var seenVersions: SeenRecordVersions {
        .of("chroma \(http.baseURL) \(settings.tenant) \(settings.database) \(generationRecordsCollection)")
    }

    /// The records collection's UUID: created when `create` is true and it does not exist; nil when it does
    /// not exist otherwise.
    /// - Throws: ``SluiceError/Code/configuration`` before any request when the collection's name, with
    ///   `_generations` added, breaks Chroma's rule (``checkCollectionName(_:derived:)``).
    private func generationRecordsID(create: Bool) async throws -> String? {
        try ChromaSink.checkCollectionName(generationRecordsCollection, derived: "the generation records' collection")
        if create {
            struct Create: Encodable {
                var name: String
                var get_or_create = true
            }
            return try await http.decode(
                Collection.self,
                "POST",
                "\(databasePath)/collections",
                json: try StoreHTTP.encode(Create(name: generationRecordsCollection))
            ).id
        }
        return try await lookUpCollection(named: generationRecordsCollection)?.id
    }

    package func insertIfAbsent(_ record: VersionedGenerationRecord) async throws {
        guard let id = try await generationRecordsID(create: true) else { return }
        struct Add: Encodable {
            var ids: [String]
            var embeddings: [[Float]]
            var documents: [String]
            var metadatas: [[String: MetadataValue]]
        }
        let body = Add(
            ids: [record.id],
            embeddings: [[0]],
            documents: [record.value],
            metadatas: [
                ["key": .string(record.key), "version": .int(record.version), "writer": .string(record.writer)]
            ]
        )
        try await http.send("POST", recordsPath(id, "add"), json: try StoreHTTP.encode(body))
    }

    package func versionedRecord(id: String) async throws -> VersionedGenerationRecord? {
        guard let collection = try await generationRecordsID(create: false) else { return nil }
        return try await generationRecords(collection, ids: [id], where: nil, offset: 0).first
    }

    package func allVersionedRecords() async throws -> [VersionedGenerationRecord] {
        try await generationRecords(where: nil)
    }

    /// A `get` with `where` `{"$and": [{"key": {"$eq": key}}, {"version": {"$gte": version}}]}` (checked on the
    /// real chroma 1.5.9 server: `version` is an integer in the records' metadata).
    package func versionedRecords(of key: String, from version: Int) async throws -> [VersionedGenerationRecord] {
        try await generationRecords(
            where: ChromaWhere.combined(
                "$and",
                [
                    ChromaWhere.condition("key", "$eq", .string(key)),
                    ChromaWhere.condition("version", "$gte", .int(version)),
                ]
            )
        )
    }

    /// Every record `filter` matches (every record without one), page by page.
    private func generationRecords(where filter: JSONValue?) async throws -> [VersionedGenerationRecord] {
        guard let collection = try await generationRecordsID(create: false) else { return [] }
        var result: [VersionedGenerationRecord] = []
        while true {
            let page = try await generationRecords(collection, ids: nil, where: filter, offset: result.count)
            result += page
            if page.count < Self.generationRecordsPage { return result }
        }
    }

    package func deleteVersionedRecords(ids: [String]) async throws {
        guard !ids.isEmpty, let collection = try await generationRecordsID(create: false) else { return }
        try await http.send("POST", recordsPath(collection, "delete"), json: try StoreHTTP.encode(["ids": ids]))
    }

    private static let generationRecordsPage = 1000

    /// The records under `ids`, or a page of those `filter` matches (of them all without one).
    private func generationRecords(
        _ collection: String,
        ids: [String]?,
        where filter: JSONValue?,
        offset: Int
    ) async throws -> [VersionedGenerationRecord] {
        struct Get: Encodable {
            var ids: [String]?
            var `where`: JSONValue?
            var include = ["documents", "metadatas"]
            var limit: Int?
            var offset: Int?
        }
        let page = try await http.decode(
            GetResponse.self,
            "POST",
            recordsPath(collection, "get"),
            json: try StoreHTTP.encode(
                Get(
                    ids: ids,
                    where: filter,
                    limit: ids == nil ? Self.generationRecordsPage : nil,
                    offset: ids == nil ? offset : nil
                )
            )
        )
        return page.ids.indices.compactMap { index in
            guard let metadata = page.metadatas?[index] ?? nil, let key = metadata["key"]?.text,
                let version = metadata["version"].flatMap({ Int($0.text) }), let writer = metadata["writer"]?.text,
                let value = page.documents?[index] ?? nil
            else { return nil }
            return VersionedGenerationRecord(key: key, version: version, value: value, writer: writer)
        }
    }
}
