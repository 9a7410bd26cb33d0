import SluiceCore

/// The hash half of hash/dedupe: what each chunk's embedder input is (``ChunkContext``: the chunk's text,
/// with `chunk.context`'s prefix), its XXH3-128 (normalized) and the chunk's deterministic vector id.
/// Deduplication against the embedding cache and against chunks in flight happens at the embed stage's
/// entrance, the one place that sees both (see ``EmbedStage``); it goes by this hash, so two identical texts
/// under different headings embed apart, and identical texts with identical prefixes once.
package struct HashStep: Sendable {
    /// The prefix rule; nil: no prefix (the chunk's text alone).
    package var context: ChunkContext?

    package init(context: ChunkContext? = nil) {
        self.context = context.flatMap { $0.setting == .none ? nil : $0 }
    }

    package func callAsFunction(_ document: DocumentWork) async -> DocumentWork {
        var document = document
        let key = document.file.key
        document.chunks = WorkCPU.measure { hashed(document.chunked, key: key) }
        document.chunked = []
        return document
    }

    package func hashed(_ chunks: [Chunk], key: String) -> [PreparedChunk] {
        chunks.map { chunk in
            let prefix: (text: String, tokens: Int) =
                context?.prefix(
                    title: chunk.metadata["title"],
                    headings: chunk.headingPath,
                    chunkTokens: chunk.tokenCount
                ) ?? (text: "", tokens: 0)
            // Without a prefix the hash is the text's own, as before the setting existed: the cache stays valid.
            let hash = prefix.text.isEmpty ? chunk.hash : ContentHash(utf8: Chunk.normalize(prefix.text + chunk.text))
            var prepared = PreparedChunk(
                chunk: chunk,
                hash: hash,
                id: VectorID(documentKey: key, ordinal: chunk.ordinal, chunkHash: hash)
            )
            prepared.embedPrefix = prefix.text
            prepared.embedPrefixTokens = prefix.tokens
            return prepared
        }
    }
}
