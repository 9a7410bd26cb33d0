import Foundation
import SluiceCore
import SluiceHTTP
import Synchronization

extension ChromaSink {
    public func prepare(embedder: EmbedderIdentity) async throws {
        try ChromaSink.checkCollectionName(settings.collection)
        // Tenant and database: created when missing (a 409 means another worker just created it).
        let tenant = try await http.send(
            "GET",
            "/api/v2/tenants/\(StoreHTTP.segment(settings.tenant))",
            accepting: [404]
        )
        if tenant.status == 404 {
            try await http.send(
                "POST",
                "/api/v2/tenants",
                json: try StoreHTTP.encode(["name": settings.tenant]),
                accepting: [409]
            )
        }
        let database = try await http.send("GET", databasePath, accepting: [404])
        if database.status == 404 {
            try await http.send(
                "POST",
                "/api/v2/tenants/\(StoreHTTP.segment(settings.tenant))/databases",
                json: try StoreHTTP.encode(["name": settings.database]),
                accepting: [409]
            )
        }
        if let existing = try await lookUpCollection() {
            let count = try await countRecords(existing.id)
            let storedSpace = existing.configuration_json?.hnsw?.space
            if let storedSpace, storedSpace != space {
                if count > 0 {
                    throw SluiceError(
                        .configuration,
                        "chroma collection \(settings.collection) uses space \(storedSpace), sink.metric asks for \(space)"
                    )
                }
                try await deleteCollection()
            } else {
                let stored = existing.metadata?["sluice_embedder"]?.text
                if count > 0, let stored, stored != embedder.description {
                    throw SluiceError(
                        .embedderMismatch,
                        "chroma collection \(settings.collection) holds vectors of \(stored), not \(embedder); re-embed with --reembed or use another sink.collection"
                    )
                }
                if count > 0, let dimension = existing.dimension, dimension != embedder.dimensions {
                    throw SluiceError(
                        .embedderMismatch,
                        "chroma collection \(settings.collection) holds \(dimension)-dimensional vectors, the embedder makes \(embedder.dimensions)"
                    )
                }
                if count == 0
                    && (stored != embedder.description
                        || (existing.dimension ?? embedder.dimensions) != embedder.dimensions)
                {
                    try await deleteCollection()
                } else {
                    // Vectors without a record (another tool's collection) are searched, never adopted.
                    let what = "chroma collection \(settings.collection)"
                    embedderRecord.set(
                        count > 0 && stored == nil ? .refused(StoreEmbedderRecord.missingRecord(what)) : .allowed
                    )
                    cache.withLock { $0.collectionID = existing.id }
                    _ = try await maxBatch()
                    return
                }
            }
        }
        struct Create: Encodable {
            var name: String
            var get_or_create = true
            var configuration: [String: [String: String]]
            var metadata: [String: MetadataValue]
        }
        let body = Create(
            name: settings.collection,
            configuration: ["hnsw": ["space": space]],
            metadata: [
                "sluice_embedder": .string(embedder.description), "sluice_dimensions": .int(embedder.dimensions),
            ]
        )
        let created = try await http.decode(
            Collection.self,
            "POST",
            "\(databasePath)/collections",
            json: try StoreHTTP.encode(body)
        )
        cache.withLock { $0.collectionID = created.id }
        embedderRecord.set(.allowed)
        _ = try await maxBatch()
    }

    func deleteCollection() async throws {
        try await http.send(
            "DELETE",
            "\(databasePath)/collections/\(StoreHTTP.segment(settings.collection))",
            accepting: [404]
        )
        cache.withLock { $0.collectionID = nil }
    }

    func countRecords(_ id: String) async throws -> Int {
        let response = try await http.send("GET", recordsPath(id, "count"))
        guard let count = Int(response.bodyText.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw SluiceError(.sinkFailed, "chroma count: unexpected answer: \(StoreHTTP.excerpt(response.bodyText))")
        }
        return count
    }

    func requireCollection() async throws -> String {
        guard let id = try await collectionID() else {
            throw SluiceError(
                .sinkFailed,
                "chroma collection \(settings.collection) does not exist (it is created by the first run)"
            )
        }
        return id
    }

    public func upsert(_ records: [VectorRecord]) async throws {
        guard !records.isEmpty else { return }
        let id = try await requireCollection()
        let limit = min(settings.batch, try await maxBatch())
        let base64 = cache.withLock { $0.base64 }
        struct Upsert: Encodable {
            var ids: [String]
            var embeddings: ChromaEmbeddings
            var documents: [String]
            var metadatas: [[String: MetadataValue]]
        }
        for batch in RecordBatches.split(
            records,
            maxCount: limit,
            maxBytes: settings.maxBatchBytes,
            size: RecordBatches.estimatedJSONBytes
        ) {
            let body = Upsert(
                ids: batch.map(\.id.rawValue),
                embeddings: ChromaEmbeddings(batch.map(\.vector), base64: base64),
                documents: batch.map(\.text),
                metadatas: batch.map(Self.metadata(of:))
            )
            try await http.send("POST", recordsPath(id, "upsert"), json: try StoreHTTP.encode(body))
        }
    }

    static func metadata(of record: VectorRecord) -> [String: MetadataValue] {
        var metadata = NumericTimes.encode(record.metadata)
        metadata["document_key"] = .string(record.documentKey)
        metadata["ordinal"] = .int(record.ordinal)
        return metadata
    }

    public func delete(_ ids: [VectorID]) async throws {
        guard !ids.isEmpty, let id = try await collectionID() else { return }
        let limit = try await maxBatch()
        var start = 0
        while start < ids.count {
            let end = min(start + limit, ids.count)
            try await http.send(
                "POST",
                recordsPath(id, "delete"),
                json: try StoreHTTP.encode(["ids": ids[start..<end].map(\.rawValue)])
            )
            start = end
        }
    }

    public func count() async throws -> Int {
        guard let id = try await collectionID() else { return 0 }
        return try await countRecords(id)
    }

    struct GetResponse: Decodable {
        var ids: [String]
        var documents: [String?]?
        var metadatas: [[String: MetadataValue]?]?
        var embeddings: [[Float]]?
    }

    /// One page of records (by offset; Chroma's order), with or without their contents.
    func page(_ id: String, offset: Int, limit: Int, full: Bool, ids: [VectorID]? = nil) async throws -> GetResponse {
        struct Get: Encodable {
            var ids: [String]?
            var include: [String]
            var limit: Int?
            var offset: Int?
        }
        let body = Get(
            ids: ids?.map(\.rawValue),
            include: full ? ["documents", "metadatas", "embeddings"] : [],
            limit: ids == nil ? limit : nil,
            offset: ids == nil ? offset : nil
        )
        return try await http.decode(GetResponse.self, "POST", recordsPath(id, "get"), json: try StoreHTTP.encode(body))
    }

    static func records(_ page: GetResponse) throws -> [VectorRecord] {
        try page.ids.indices.map { index in
            var metadata = NumericTimes.decode(page.metadatas?[index].flatMap { $0 } ?? [:])
            let key = metadata.removeValue(forKey: "document_key")?.text ?? ""
            let ordinal = metadata.removeValue(forKey: "ordinal").flatMap { Int($0.text) } ?? 0
            guard let vector = page.embeddings?[index] else {
                throw SluiceError(.sinkFailed, "chroma get: no embedding returned")
            }
            return VectorRecord(
                id: VectorID(rawValue: page.ids[index]),
                documentKey: key,
                ordinal: ordinal,
                text: page.documents?[index].flatMap { $0 } ?? "",
                vector: vector,
                metadata: metadata
            )
        }
    }

    public func exportAll(_ body: @Sendable (VectorRecord) throws -> Void) async throws {
        guard let id = try await collectionID() else { return }
        var all: [VectorRecord] = []
        var offset = 0
        let limit = min(1000, try await maxBatch())
        while true {
            let page = try await page(id, offset: offset, limit: limit, full: true)
            all += try Self.records(page)
            if page.ids.count < limit { break }
            offset += page.ids.count
        }
        for record in all.sorted(by: { $0.id < $1.id }) { try body(record) }
    }

    public func listIDs() async throws -> Set<VectorID>? {
        guard let id = try await collectionID() else { return [] }
        var ids = Set<VectorID>()
        var offset = 0
        let limit = min(5000, try await maxBatch())
        while true {
            let page = try await page(id, offset: offset, limit: limit, full: false)
            for raw in page.ids { ids.insert(VectorID(rawValue: raw)) }
            if page.ids.count < limit { break }
            offset += page.ids.count
        }
        return ids
    }

    public func existing(_ ids: [VectorID]) async throws -> Set<VectorID> {
        guard !ids.isEmpty, let id = try await collectionID() else { return [] }
        let page = try await page(id, offset: 0, limit: ids.count, full: false, ids: ids)
        return Set(page.ids.map(VectorID.init(rawValue:)))
    }

    public func search(_ vector: [Float], k: Int) async throws -> [SearchHit] {
        try await search(vector, k: k, where: nil)
    }

    /// Top-k among the records that match `where` (Chroma's `where`, ``ChromaWhere``).
    func search(_ vector: [Float], k: Int, where filter: JSONValue?) async throws -> [SearchHit] {
        guard let id = try await collectionID() else { return [] }
        struct Query: Encodable {
            var query_embeddings: [[Float]]
            var n_results: Int
            var `where`: JSONValue?
            var include = ["documents", "metadatas", "embeddings", "distances"]
        }
        struct Answer: Decodable {
            var ids: [[String]]
            var documents: [[String?]]?
            var metadatas: [[[String: MetadataValue]?]]?
            var embeddings: [[[Float]]]?
            var distances: [[Float?]]?
        }
        let answer = try await http.decode(
            Answer.self,
            "POST",
            recordsPath(id, "query"),
            json: try StoreHTTP.encode(Query(query_embeddings: [vector], n_results: max(1, k), where: filter))
        )
        guard let ids = answer.ids.first else { return [] }
        let page = GetResponse(
            ids: ids,
            documents: answer.documents?.first,
            metadatas: answer.metadatas?.first,
            embeddings: answer.embeddings?.first
        )
        let records = try Self.records(page)
        let distances = answer.distances?.first ?? []
        return records.enumerated().map { index, record in
            let distance = index < distances.count ? (distances[index] ?? .nan) : .nan
            // cosine and ip distances are 1 − similarity; l2 is the squared distance.
            return SearchHit(score: space == "l2" ? -distance : 1 - distance, record: record)
        }
    }

    public func removeAll() async throws { try await deleteCollection() }

    public func drop() async throws { try await deleteCollection() }

    public func info() async throws -> SinkInfo {
        guard let collection = try await lookUpCollection() else {
            return SinkInfo(name: name, exists: false, count: 0)
        }
        let count = try await countRecords(collection.id)
        let space = collection.configuration_json?.hnsw?.space
        return SinkInfo(
            name: name,
            count: count,
            dimensions: collection.dimension ?? collection.metadata?["sluice_dimensions"].flatMap { Int($0.text) },
            metric: space.map { $0 == "ip" ? "dot" : $0 },
            embedder: collection.metadata?["sluice_embedder"]?.text,
            details: ["collection id": collection.id, "max batch size": String(try await maxBatch())]
        )
    }
}
