import SluiceCore

/// Reading vectors back for a new or lost state (``VectorSink/storedVectors(ofDocument:)``): Chroma's `get`
/// with a `where` on the record's `document_key`, a page at a time. The collection's metadata names the
/// embedder its vectors came from, which ``prepare(embedder:)`` has checked, so they can be adopted; a
/// collection that holds vectors without that record (created by another tool) is not adopted from.
extension ChromaSink {
    public var readBackRefusal: String? { embedderRecord.refusal }

    public func storedVectors(ofDocument key: String) async throws -> [VectorID: [Float]]? {
        guard embedderRecord.allowsReadBack else { return nil }
        guard let id = try await collectionID() else { return [:] }
        struct Get: Encodable {
            var `where`: JSONValue
            var include = ["embeddings"]
            var limit: Int
            var offset: Int
        }
        let filter = ChromaWhere.condition("document_key", "$eq", .string(key))
        let limit = min(1000, try await maxBatch())
        var out: [VectorID: [Float]] = [:]
        var offset = 0
        while true {
            let page = try await http.decode(
                GetResponse.self,
                "POST",
                recordsPath(id, "get"),
                json: try StoreHTTP.encode(Get(where: filter, limit: limit, offset: offset))
            )
            for (index, raw) in page.ids.enumerated() {
                guard let vector = page.embeddings?[index] else {
                    throw SluiceError(.sinkFailed, "chroma get: no embedding returned for \(raw)")
                }
                out[VectorID(rawValue: raw)] = vector
            }
            if page.ids.count < limit { break }
            offset += page.ids.count
        }
        return out
    }
}
