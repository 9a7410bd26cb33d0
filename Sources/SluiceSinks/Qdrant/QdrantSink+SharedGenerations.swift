import Foundation
import SluiceCore
import SluiceHTTP

/// The records of a sharded deployment's index generations (``SharedGenerationRecords``) in Qdrant: the
/// collection `<collection>_generations` beside the original generation's (one-dimensional vectors), a point
/// per version of a key (``InsertOnceRecordStore``), its id a UUID made from `<key>@<version>` and its
/// payload `key`, `version`, `value` and `writer`.
///
/// The insert-once write is an upsert with an `update_filter` (Qdrant 1.16 and later: "only points matching
/// this filter will be updated … new points will be inserted regardless of the filter") that no stored point
/// matches (`version` is -1; stored versions start at 1): a point that exists is left as it is.
///
/// `key` and `version` have payload indexes (``generationRecordIndexes``), created with the collection, so that a
/// Qdrant in strict mode accepts the reads' filter and the `update_filter`.
extension QdrantSink: InsertOnceRecordStore {
    /// `/collections/<collection>_generations`.
    var generationRecordsPath: String { "/collections/\(StoreHTTP.segment(settings.collection + "_generations"))" }

    /// The highest version of each record read from this collection, in this process.
    package var seenVersions: SeenRecordVersions { .of("qdrant \(http.baseURL)\(generationRecordsPath)") }

    struct GenerationRecordPoint: Codable {
        var id: String
        var vector: [Float]?
        var payload: Payload?
        struct Payload: Codable {
            var key: String
            var version: Int
            var value: String
            var writer: String
        }

        /// The point's id: a UUID made from the record's id.
        static func pointID(_ recordID: String) -> String {
            VectorID(rawValue: ContentHash(utf8: "sluice-generations\u{0}\(recordID)").hex).uuidString
        }

        var record: VersionedGenerationRecord? {
            payload.map {
                VersionedGenerationRecord(key: $0.key, version: $0.version, value: $0.value, writer: $0.writer)
            }
        }
    }

    package func insertIfAbsent(_ record: VersionedGenerationRecord) async throws {
        try await requireConditionalUpdates()
        let exists = try await http.send("GET", generationRecordsPath, accepting: [404])
        if exists.status == 404 {
            struct Create: Encodable {
                var vectors: JSONValue = .object(["size": .value(.int(1)), "distance": .value(.string("Dot"))])
            }
            // 409: another process created it meanwhile.
            try await http.send("PUT", generationRecordsPath, json: try StoreHTTP.encode(Create()), accepting: [409])
            try await createPayloadIndexes(Self.generationRecordIndexes, at: generationRecordsPath)
        }
        struct Upsert: Encodable {
            var points: [GenerationRecordPoint]
            var update_filter: JSONValue
        }
        let point = GenerationRecordPoint(
            id: GenerationRecordPoint.pointID(record.id),
            vector: [1],
            payload: .init(key: record.key, version: record.version, value: record.value, writer: record.writer)
        )
        let never: JSONValue = .object([
            "must": .array([
                .object(["key": .value(.string("version")), "match": .object(["value": .value(.int(-1))])])
            ])
        ])
        let body = try StoreHTTP.encode(Upsert(points: [point], update_filter: never))
        try await indexingOnRefusal(Self.generationRecordIndexes, at: generationRecordsPath) {
            try await http.send("PUT", "\(generationRecordsPath)/points?wait=true", json: body)
        }
    }

    /// Refuses a Qdrant older than 1.16: it would ignore `update_filter` (an unknown field) and overwrite the
    /// point, so two racing changes could both believe they won.
    /// - Throws: ``SluiceError/Code/configuration`` naming the server's version.
    func requireConditionalUpdates() async throws {
        struct Root: Decodable { var version: String? }
        let root = try await http.decode(Root.self, "GET", "/")
        let parts = (root.version ?? "").split(separator: ".").compactMap { Int($0) }
        guard parts.count >= 2, (parts[0], parts[1]) >= (1, 16) else {
            throw SluiceError(
                .configuration,
                "qdrant at \(http.baseURL) is version \(root.version ?? "unknown"): sharded index generations need Qdrant 1.16 or later (conditional updates, `update_filter`); upgrade Qdrant, or run the generations unsharded"
            )
        }
    }

    package func versionedRecord(id: String) async throws -> VersionedGenerationRecord? {
        struct Retrieve: Encodable {
            var ids: [String]
            var with_payload = true
            var with_vector = false
        }
        let response = try await http.send(
            "POST",
            "\(generationRecordsPath)/points",
            json: try StoreHTTP.encode(Retrieve(ids: [GenerationRecordPoint.pointID(id)])),
            accepting: [404]
        )
        guard response.status != 404 else { return nil }
        return try JSONDecoder().decode(Envelope<[GenerationRecordPoint]>.self, from: Data(response.body)).result
            .first?.record
    }

    package func allVersionedRecords() async throws -> [VersionedGenerationRecord] {
        try await scrollGenerationRecords(filter: nil)
    }

    /// A scroll with the `filter` `{"must": [{"key": "key", "match": {"value": key}}, {"key": "version",
    /// "range": {"gte": version}}]}`.
    package func versionedRecords(of key: String, from version: Int) async throws -> [VersionedGenerationRecord] {
        let filter: JSONValue = .object([
            "must": .array([
                .object(["key": .value(.string("key")), "match": .object(["value": .value(.string(key))])]),
                .object(["key": .value(.string("version")), "range": .object(["gte": .value(.int(version))])]),
            ])
        ])
        return try await scrollGenerationRecords(filter: filter)
    }

    /// Every record `filter` matches (every record without one); none when the collection does not exist.
    private func scrollGenerationRecords(filter: JSONValue?) async throws -> [VersionedGenerationRecord] {
        struct Scroll: Encodable {
            var limit = 1000
            var offset: String?
            var filter: JSONValue?
            var with_payload = true
            var with_vector = false
        }
        struct Page: Decodable {
            var points: [GenerationRecordPoint]
            var next_page_offset: String?
        }
        var result: [VersionedGenerationRecord] = []
        var offset: String?
        repeat {
            let body = try StoreHTTP.encode(Scroll(offset: offset, filter: filter))
            let response = try await indexingOnRefusal(Self.generationRecordIndexes, at: generationRecordsPath) {
                try await http.send("POST", "\(generationRecordsPath)/points/scroll", json: body, accepting: [404])
            }
            guard response.status != 404 else { return [] }
            let page = try JSONDecoder().decode(Envelope<Page>.self, from: Data(response.body)).result
            result += page.points.compactMap(\.record)
            offset = page.next_page_offset
        } while offset != nil
        return result
    }

    package func deleteVersionedRecords(ids: [String]) async throws {
        guard !ids.isEmpty else { return }
        struct Delete: Encodable { var points: [String] }
        try await http.send(
            "POST",
            "\(generationRecordsPath)/points/delete?wait=true",
            json: try StoreHTTP.encode(Delete(points: ids.map(GenerationRecordPoint.pointID))),
            accepting: [404]
        )
    }
}
