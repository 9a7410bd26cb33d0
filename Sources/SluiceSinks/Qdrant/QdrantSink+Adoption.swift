import SluiceCore

/// The embedder record in the collection's metadata, and reading vectors back for a new or lost state
/// (``VectorSink/storedVectors(ofDocument:)``; docs/OPERATIONS.md, "A lost state, re-sharding").
///
/// Qdrant records only the size and distance of a collection's vectors, so Sluice writes the embedder's
/// identity into the collection's metadata (`metadata` when the collection is
/// created, `PATCH /collections/{c}` to record it in an empty one) and ``prepare(embedder:)`` compares it
/// with the pipeline's. A document's vectors are read with `scroll`, a `document_key` filter (the field has
/// a payload index) and `with_vector`, a page at a time.
extension QdrantSink {
    /// `sluice_embedder` and `sluice_dimensions`, as Chroma's collection metadata holds them.
    static func recordedMetadata(_ embedder: EmbedderIdentity) -> [String: MetadataValue] {
        [
            StoreEmbedderRecord.field: .string(embedder.description),
            StoreEmbedderRecord.dimensionsField: .int(embedder.dimensions),
        ]
    }

    /// Compares the collection's record with the pipeline's embedder (the collection's vectors already have
    /// the embedder's size and the metric's distance).
    /// - Throws: ``SluiceError/Code/embedderMismatch`` when the collection holds another embedder's vectors.
    func checkEmbedderRecord(_ recorded: String?, count: Int, embedder: EmbedderIdentity) async throws {
        let what = "qdrant collection \(settings.collection)"
        let write = try embedderRecord.check(
            recorded: recorded,
            expected: embedder.description,
            isEmpty: count == 0,
            what: what
        ) {
            StoreEmbedderRecord.mismatch(what, recorded: recorded ?? "", embedder: embedder, other: "sink.collection")
        }
        guard write else { return }
        struct Update: Encodable { var metadata: [String: MetadataValue] }
        try await http.send(
            "PATCH",
            collectionPath,
            json: try StoreHTTP.encode(Update(metadata: Self.recordedMetadata(embedder)))
        )
    }

    public var readBackRefusal: String? { embedderRecord.refusal }

    public func storedVectors(ofDocument key: String) async throws -> [VectorID: [Float]]? {
        guard embedderRecord.allowsReadBack else { return nil }
        let filter = JSONValue.member(
            "must",
            .array([
                .object(["key": .value(.string("document_key")), "match": .member("value", .value(.string(key)))])
            ])
        )
        var out: [VectorID: [Float]] = [:]
        try await scroll(withContents: false, withVectors: true, filter: filter) { points in
            for point in points {
                guard let payload = point.payload, let vector = point.vector else {
                    throw SluiceError(.sinkFailed, "qdrant scroll: no vector or id returned for point \(point.id)")
                }
                out[VectorID(rawValue: payload.sluice_id)] = vector
            }
        }
        return out
    }
}
