import SluiceCore
import SluiceTesting

extension InMemorySink {
    /// Prepares the sink for `embedder` and stores one record per entry (`key#position`, its text embedded
    /// by `embedder`): the small indexes the searcher's and the evaluation's tests rank.
    func store(
        _ entries: [(key: String, text: String, metadata: [String: MetadataValue])],
        embedder: some Embedder
    ) async throws {
        try await prepare(embedder: embedder.identity)
        let vectors = try await embedder.embed(entries.map(\.text))
        try await upsert(
            zip(entries, vectors).enumerated().map { ordinal, pair in
                VectorRecord(
                    id: VectorID(rawValue: "\(pair.0.key)#\(ordinal)"),
                    documentKey: pair.0.key,
                    ordinal: ordinal,
                    text: pair.0.text,
                    vector: pair.1,
                    metadata: pair.0.metadata
                )
            }
        )
    }
}
