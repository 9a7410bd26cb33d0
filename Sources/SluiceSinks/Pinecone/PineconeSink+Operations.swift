import Foundation
import SluiceCore
import SluiceHTTP
import Synchronization

extension PineconeSink {
    public func prepare(embedder: EmbedderIdentity) async throws {
        try PineconeSink.checkNames(index: settings.index, namespace: settings.namespace)
        var description = try await describeIndex()
        let existed = description != nil
        if let existing = description {
            if let dimension = existing.dimension, dimension != embedder.dimensions {
                throw SluiceError(
                    .embedderMismatch,
                    "pinecone index \(settings.index) has dimension \(dimension), the embedder makes \(embedder.dimensions); use another sink.index"
                )
            }
            if let metric = existing.metric, metric != metricName {
                throw SluiceError(
                    .configuration,
                    "pinecone index \(settings.index) uses metric \(metric), sink.metric asks for \(metricName)"
                )
            }
        } else {
            struct Create: Encodable {
                var name: String
                var dimension: Int
                var metric: String
                var spec = ["serverless": ["cloud": "aws", "region": "us-east-1"]]
                var tags: [String: String]
            }
            let create = Create(
                name: settings.index,
                dimension: embedder.dimensions,
                metric: metricName,
                tags: [embedderTagKey: Self.embedderTagValue(embedder)]
            )
            try await control.send("POST", "/indexes", json: try StoreHTTP.encode(create), accepting: [409])
            description = try await describeIndex()
        }
        // Wait (bounded) for a new index to be ready.
        var waited = 0
        while description?.status?.ready == false && waited < 120 {
            try await Task.sleep(for: .seconds(1))
            waited += 1
            description = try await describeIndex()
        }
        guard let description, description.status?.ready != false else {
            throw SluiceError(.sinkUnavailable, "pinecone index \(settings.index) is not ready after 120 s")
        }
        let data = try dataPlane(for: description)
        state.withLock { $0.data = data }
        // A new index carries the record from its creation; another worker's new one is checked as any.
        if existed || description.tags?[embedderTagKey] != Self.embedderTagValue(embedder) {
            try await checkEmbedderRecord(description.tags?[embedderTagKey], embedder: embedder)
        } else {
            embedderRecord.set(.allowed)
        }
    }

    struct Vector: Codable {
        var id: String
        var values: [Float]?
        var metadata: [String: MetadataValue]?
        var score: Float?
    }

    /// The record's metadata, its text trimmed to fit.
    func metadata(of record: VectorRecord) -> [String: MetadataValue] {
        var metadata = NumericTimes.encode(record.metadata)
        metadata["document_key"] = .string(record.documentKey)
        metadata["ordinal"] = .int(record.ordinal)
        let others = metadata.reduce(0) { $0 + $1.key.utf8.count + $1.value.text.utf8.count + 8 } + 64
        let budget = max(0, min(settings.metadataTextBytes, Self.maxMetadataBytes - others - 256))
        var text = Substring(record.text)
        if text.utf8.count > budget {
            while text.utf8.count > budget { text = text.dropLast(max(1, (text.utf8.count - budget) / 4)) }
            metadata["text_truncated"] = .string("true")
            metadata["text_bytes"] = .int(record.text.utf8.count)
        }
        metadata["text"] = .string(String(text))
        return metadata
    }

    static func record(_ vector: Vector) throws -> VectorRecord {
        guard var metadata = vector.metadata.map(NumericTimes.decode), let values = vector.values else {
            throw SluiceError(.sinkFailed, "pinecone: a record came back without values or metadata")
        }
        let key = metadata.removeValue(forKey: "document_key")?.text ?? ""
        let ordinal = metadata.removeValue(forKey: "ordinal").flatMap { Int($0.text) } ?? 0
        let text = metadata.removeValue(forKey: "text")?.text ?? ""
        return VectorRecord(
            id: vectorID(vector.id),
            documentKey: key,
            ordinal: ordinal,
            text: text,
            vector: values,
            metadata: metadata
        )
    }

    public func upsert(_ records: [VectorRecord]) async throws {
        guard !records.isEmpty else { return }
        let data = try await requireData()
        let vectors = records.map {
            Vector(id: Self.recordID(key: $0.documentKey, id: $0.id), values: $0.vector, metadata: metadata(of: $0))
        }
        let maxCount = min(settings.batch, Self.maxRecordsPerBatch)
        let maxBytes = min(settings.maxBatchBytes, Self.maxBytesPerBatch - 4096)
        let sizes = try vectors.map { try StoreHTTP.encode($0).count + 1 }
        let indexed = Array(zip(vectors, sizes))
        for batch in RecordBatches.split(indexed, maxCount: maxCount, maxBytes: maxBytes, size: { $0.1 }) {
            try await upsert(batch.map(\.0), namespace: settings.namespace, data)
        }
    }

    /// Upserts `vectors` (within Pinecone's limits of a request) into `namespace` in one request.
    func upsert(_ vectors: [Vector], namespace: String, _ data: StoreHTTP) async throws {
        struct Upsert: Encodable {
            var vectors: [Vector]
            var namespace: String
        }
        try await data.send(
            "POST",
            "/vectors/upsert",
            json: try StoreHTTP.encode(Upsert(vectors: vectors, namespace: namespace))
        )
    }

    public func delete(_ ids: [VectorID]) async throws {
        try await delete(ids, documentKeys: [:])
    }

    public func delete(_ ids: [VectorID], documentKeys: [VectorID: String]) async throws {
        guard !ids.isEmpty, let data = try await data() else { return }
        let listed = state.withLock { $0.listed }
        var recordIDs: [String] = []
        for id in ids {
            if let key = documentKeys[id] {
                recordIDs.append(Self.recordID(key: key, id: id))
            } else if let full = listed[id] {
                recordIDs.append(full)
            } else {
                throw SluiceError(.sinkFailed, "pinecone: cannot delete \(id) without its document key")
            }
        }
        struct Delete: Encodable {
            var ids: [String]
            var namespace: String
        }
        var start = 0
        while start < recordIDs.count {
            let end = min(start + 1000, recordIDs.count)
            // 404: the namespace does not exist (never written, or its last record deleted, perhaps by this
            // request's first attempt): the records are gone.
            try await data.send(
                "POST",
                "/vectors/delete",
                json: try StoreHTTP.encode(Delete(ids: Array(recordIDs[start..<end]), namespace: settings.namespace)),
                accepting: [404]
            )
            start = end
        }
    }

    struct Stats: Decodable {
        var namespaces: [String: Namespace]?
        var dimension: Int?
        var totalVectorCount: Int?
        struct Namespace: Decodable { var vectorCount: Int? }
    }

    public func count() async throws -> Int {
        guard let data = try await data() else { return 0 }
        let stats = try await data.decode(Stats.self, "POST", "/describe_index_stats", json: Array("{}".utf8))
        return stats.namespaces?[settings.namespace]?.vectorCount ?? 0
    }

    public func search(_ vector: [Float], k: Int) async throws -> [SearchHit] {
        try await search(vector, k: k, filter: nil)
    }

    /// Top-k among the records that match `filter` (Pinecone's metadata filter, ``PineconeFilter``).
    func search(_ vector: [Float], k: Int, filter: JSONValue?) async throws -> [SearchHit] {
        guard let data = try await data() else { return [] }
        struct Query: Encodable {
            var namespace: String
            var vector: [Float]
            var topK: Int
            var filter: JSONValue?
            var includeValues = true
            var includeMetadata = true
        }
        struct Answer: Decodable { var matches: [Vector]? }
        let answer = try await data.decode(
            Answer.self,
            "POST",
            "/query",
            json: try StoreHTTP.encode(
                Query(namespace: settings.namespace, vector: vector, topK: max(1, k), filter: filter)
            )
        )
        // Pinecone scores: cosine similarity, dot product, or squared Euclidean distance (lower is better).
        return try (answer.matches ?? []).map {
            SearchHit(
                score: metricName == "euclidean" ? -($0.score ?? 0) : ($0.score ?? 0),
                record: try Self.record($0)
            )
        }
    }

    /// Every Pinecone id of the namespace (optionally under a prefix), page by page.
    func listRecordIDs(prefix: String? = nil) async throws -> [String] {
        guard let data = try await data() else { return [] }
        struct Page: Decodable {
            var vectors: [Item]?
            var pagination: Pagination?
            struct Item: Decodable { var id: String }
            struct Pagination: Decodable { var next: String? }
        }
        var out: [String] = []
        var token: String?
        repeat {
            var query = "limit=100&namespace=\(StoreHTTP.segment(settings.namespace))"
            if let prefix { query += "&prefix=\(StoreHTTP.segment(prefix))" }
            if let token { query += "&paginationToken=\(StoreHTTP.segment(token))" }
            let page = try await data.decode(Page.self, "GET", "/vectors/list?\(query)")
            out += (page.vectors ?? []).map(\.id)
            token = page.pagination?.next
        } while token != nil
        return out
    }

    /// Fetches records by Pinecone id (≤ 100 per request) from `namespace` (nil: the sink's).
    func fetch(_ recordIDs: [String], namespace: String? = nil) async throws -> [Vector] {
        guard let data = try await data() else { return [] }
        struct Answer: Decodable { var vectors: [String: Vector]? }
        var out: [Vector] = []
        var start = 0
        while start < recordIDs.count {
            let end = min(start + 100, recordIDs.count)
            let query = recordIDs[start..<end].map { "ids=\(StoreHTTP.segment($0))" }.joined(separator: "&")
            let answer = try await data.decode(
                Answer.self,
                "GET",
                "/vectors/fetch?\(query)&namespace=\(StoreHTTP.segment(namespace ?? settings.namespace))"
            )
            out += (answer.vectors ?? [:]).values
            start = end
        }
        return out
    }

    public func exportAll(_ body: @Sendable (VectorRecord) throws -> Void) async throws {
        let records = try await fetch(try await listRecordIDs()).map(Self.record)
        for record in records.sorted(by: { $0.id < $1.id }) { try body(record) }
    }

    public func listIDs() async throws -> Set<VectorID>? {
        let recordIDs = try await listRecordIDs()
        var map: [VectorID: String] = [:]
        for recordID in recordIDs { map[Self.vectorID(recordID)] = recordID }
        let learned = map
        state.withLock { $0.listed.merge(learned) { $1 } }
        return Set(map.keys)
    }

    public func existing(_ ids: [VectorID]) async throws -> Set<VectorID> {
        guard let stored = try await listIDs() else { return [] }
        return stored.intersection(ids)
    }

    public func removeAll() async throws {
        guard let data = try await data() else { return }
        struct DeleteAll: Encodable {
            var deleteAll = true
            var namespace: String
        }
        try await data.send(
            "POST",
            "/vectors/delete",
            json: try StoreHTTP.encode(DeleteAll(namespace: settings.namespace)),
            accepting: [404]
        )
    }

    /// Deletes the namespace's vectors (the index itself, which may hold other namespaces, is kept).
    public func drop() async throws { try await removeAll() }

    public func info() async throws -> SinkInfo {
        guard let description = try await describeIndex() else { return SinkInfo(name: name, exists: false, count: 0) }
        let metric =
            ["cosine": "cosine", "euclidean": "l2", "dotproduct": "dot"][description.metric ?? ""] ?? description.metric
        return SinkInfo(
            name: name,
            count: try await count(),
            dimensions: description.dimension,
            metric: metric,
            embedder: description.tags?[embedderTagKey].flatMap(Self.embedder(tagValue:)),
            details: ["host": description.host ?? "unknown", "api version": Self.apiVersion]
        )
    }
}
