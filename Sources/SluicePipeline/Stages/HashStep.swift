import SluiceCore

/// The hash half of hash/dedupe: each chunk's XXH3-128 (of its normalized text) and its deterministic
/// vector id. Deduplication against the embedding cache and against chunks in flight happens at the
/// embed stage's entrance, the one place that sees both (see ``EmbedStage``).
package struct HashStep: Sendable {
    package func callAsFunction(_ document: DocumentWork) async -> DocumentWork {
        var document = document
        let key = document.file.key
        document.chunks = WorkCPU.measure { hashed(document.chunked, key: key) }
        document.chunked = []
        return document
    }

    private func hashed(_ chunks: [Chunk], key: String) -> [PreparedChunk] {
        chunks.map { chunk in
            let hash = chunk.hash
            return PreparedChunk(
                chunk: chunk,
                hash: hash,
                id: VectorID(documentKey: key, ordinal: chunk.ordinal, chunkHash: hash),
                vector: nil
            )
        }
    }
}
