import Foundation
import SluiceCore
import SluiceHTTP

extension QdrantSink {
    public func prepare(embedder: EmbedderIdentity) async throws {
        try QdrantSink.checkCollectionName(settings.collection)
        if let info = try await collectionInfo() {
            let count = info.points_count ?? 0
            let vectors = info.config.params.vectors
            if vectors.size == embedder.dimensions && vectors.distance == distance {
                try await checkEmbedderRecord(info.config.metadata?.embedder, count: count, embedder: embedder)
                return
            }
            if count > 0 {
                if vectors.size != embedder.dimensions {
                    throw SluiceError(
                        .embedderMismatch,
                        "qdrant collection \(settings.collection) holds \(vectors.size)-dimensional vectors, the embedder makes \(embedder.dimensions); re-embed with --reembed or use another sink.collection"
                    )
                }
                throw SluiceError(
                    .configuration,
                    "qdrant collection \(settings.collection) uses distance \(vectors.distance), sink.metric asks for \(distance)"
                )
            }
            try await drop()
        }
        struct Create: Encodable {
            var vectors: Vectors
            var metadata: [String: MetadataValue]
            struct Vectors: Encodable {
                var size: Int
                var distance: String
            }
        }
        let create = Create(
            vectors: .init(size: embedder.dimensions, distance: distance),
            metadata: Self.recordedMetadata(embedder)
        )
        let created = try await http.send("PUT", collectionPath, json: try StoreHTTP.encode(create), accepting: [409])
        if created.status == 409, let info = try await collectionInfo() {
            // Another worker created it first: its record is checked as any existing collection's.
            try await checkEmbedderRecord(
                info.config.metadata?.embedder,
                count: info.points_count ?? 0,
                embedder: embedder
            )
        } else {
            embedderRecord.set(.allowed)
        }
        // The fields Sluice filters on, indexed: a strict-mode Qdrant refuses filters on unindexed fields.
        try await createPayloadIndexes(Self.collectionIndexes, at: collectionPath)
    }

    public func upsert(_ records: [VectorRecord]) async throws {
        guard !records.isEmpty else { return }
        struct Upsert: Encodable { var points: [Point] }
        for batch in RecordBatches.split(
            records,
            maxCount: batchSize,
            maxBytes: settings.maxBatchBytes,
            size: RecordBatches.estimatedJSONBytes
        ) {
            try await http.send(
                "PUT",
                "\(collectionPath)/points?wait=true",
                json: try StoreHTTP.encode(Upsert(points: batch.map(Point.init)))
            )
        }
    }

    public func delete(_ ids: [VectorID]) async throws {
        guard !ids.isEmpty else { return }
        struct Delete: Encodable { var points: [String] }
        var start = 0
        while start < ids.count {
            let end = min(start + 1000, ids.count)
            try await http.send(
                "POST",
                "\(collectionPath)/points/delete?wait=true",
                json: try StoreHTTP.encode(Delete(points: ids[start..<end].map(\.uuidString))),
                accepting: [404]
            )
            start = end
        }
    }

    /// Deletes every point of a document, by a filter on `document_key`.
    public func deleteDocument(_ key: String) async throws {
        struct Delete: Encodable {
            var filter: Filter
            struct Filter: Encodable { var must: [Condition] }
            struct Condition: Encodable {
                var key = "document_key"
                var match: Match
            }
            struct Match: Encodable { var value: String }
        }
        let body = Delete(filter: .init(must: [.init(match: .init(value: key))]))
        try await http.send(
            "POST",
            "\(collectionPath)/points/delete?wait=true",
            json: try StoreHTTP.encode(body),
            accepting: [404]
        )
    }

    public func count() async throws -> Int {
        struct Count: Decodable { var count: Int }
        let response = try await http.send(
            "POST",
            "\(collectionPath)/points/count",
            json: Array(#"{"exact":true}"#.utf8),
            accepting: [404]
        )
        guard response.status != 404 else { return 0 }
        return try JSONDecoder().decode(Envelope<Count>.self, from: Data(response.body)).result.count
    }

    public func search(_ vector: [Float], k: Int) async throws -> [SearchHit] {
        try await search(vector, k: k, filter: nil)
    }

    /// Top-k among the points that match `filter` (Qdrant's filter JSON, ``QdrantFilter``).
    func search(_ vector: [Float], k: Int, filter: JSONValue?) async throws -> [SearchHit] {
        struct Search: Encodable {
            var vector: [Float]
            var limit: Int
            var filter: JSONValue?
            var with_payload = true
            var with_vector = true
        }
        let body = try StoreHTTP.encode(Search(vector: vector, limit: max(1, k), filter: filter))
        // A collection an older Sluice made lacks some of the indexes a filter needs on a strict-mode Qdrant.
        let response = try await indexingOnRefusal(Self.collectionIndexes, at: collectionPath) {
            try await http.send("POST", "\(collectionPath)/points/search", json: body, accepting: [404])
        }
        guard response.status != 404 else { return [] }
        let points = try JSONDecoder().decode(Envelope<[Point]>.self, from: Data(response.body)).result
        // Qdrant scores: cosine similarity, dot product, or the Euclidean distance (lower is better).
        return try points.map {
            SearchHit(score: distance == "Euclid" ? -($0.score ?? 0) : ($0.score ?? 0), record: try $0.record())
        }
    }

    /// Pages through every point with `scroll`.
    /// `filter` (Qdrant's filter JSON) narrows it; `withVectors` without `withContents` reads ids and vectors.
    func scroll(
        withContents: Bool,
        withVectors: Bool? = nil,
        filter: JSONValue? = nil,
        _ body: ([Point]) throws -> Void
    ) async throws {
        struct Scroll: Encodable {
            var limit: Int
            var offset: String?
            var filter: JSONValue?
            var with_payload: PayloadSelector
            var with_vector: Bool
        }
        struct Page: Decodable {
            var points: [Point]
            var next_page_offset: String?
        }
        var offset: String?
        repeat {
            let request = Scroll(
                limit: 1000,
                offset: offset,
                filter: filter,
                with_payload: withContents ? .all : .fields(["sluice_id"]),
                with_vector: withVectors ?? withContents
            )
            let response = try await http.send(
                "POST",
                "\(collectionPath)/points/scroll",
                json: try StoreHTTP.encode(request),
                accepting: [404]
            )
            guard response.status != 404 else { return }
            let page = try JSONDecoder().decode(Envelope<Page>.self, from: Data(response.body)).result
            try body(page.points)
            offset = page.next_page_offset
        } while offset != nil
    }

    public func exportAll(_ body: @Sendable (VectorRecord) throws -> Void) async throws {
        var all: [VectorRecord] = []
        try await scroll(withContents: true) { points in all += try points.map { try $0.record() } }
        for record in all.sorted(by: { $0.id < $1.id }) { try body(record) }
    }

    public func listIDs() async throws -> Set<VectorID>? {
        var ids = Set<VectorID>()
        try await scroll(withContents: false) { points in
            for point in points { if let id = point.payload?.sluice_id { ids.insert(VectorID(rawValue: id)) } }
        }
        return ids
    }

    public func existing(_ ids: [VectorID]) async throws -> Set<VectorID> {
        guard !ids.isEmpty else { return [] }
        struct Retrieve: Encodable {
            var ids: [String]
            var with_payload = ["sluice_id"]
            var with_vector = false
        }
        let response = try await http.send(
            "POST",
            "\(collectionPath)/points",
            json: try StoreHTTP.encode(Retrieve(ids: ids.map(\.uuidString))),
            accepting: [404]
        )
        guard response.status != 404 else { return [] }
        let points = try JSONDecoder().decode(Envelope<[Point]>.self, from: Data(response.body)).result
        return Set(points.compactMap { $0.payload.map { VectorID(rawValue: $0.sluice_id) } })
    }

    public func removeAll() async throws { try await drop() }

    public func drop() async throws {
        try await http.send("DELETE", collectionPath, accepting: [404])
    }

    public func info() async throws -> SinkInfo {
        guard let info = try await collectionInfo() else { return SinkInfo(name: name, exists: false, count: 0) }
        let vectors = info.config.params.vectors
        let metric = ["Cosine": "cosine", "Euclid": "l2", "Dot": "dot"][vectors.distance] ?? vectors.distance
        return SinkInfo(
            name: name,
            count: try await count(),
            dimensions: vectors.size,
            metric: metric,
            embedder: info.config.metadata?.embedder,
            details: ["batch": String(batchSize)]
        )
    }
}
