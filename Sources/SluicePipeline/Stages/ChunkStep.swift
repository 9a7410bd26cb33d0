import SluiceCore

/// Splits a document's text into chunks, hashes each chunk (XXH3-128 of its normalized text) and derives
/// its vector id; then looks the hashes up in the embedding cache so that only new text is embedded.
package struct ChunkStep: Sendable {
    package let chunker: any Chunker

    package func callAsFunction(_ document: DocumentWork) async -> DocumentWork {
        var document = document
        guard let text = document.text else { return document }
        let chunks = chunker.chunk(text)
        document.text = nil
        guard !chunks.isEmpty else {
            document.fail(SluiceError(.emptyDocument, "no text to index after extraction"), as: .emptyDocument)
            return document
        }
        document.chunks = chunks.map { chunk in
            let hash = chunk.hash
            return PreparedChunk(chunk: chunk, hash: hash, id: VectorID(documentKey: document.file.key, ordinal: chunk.ordinal, chunkHash: hash), vector: nil)
        }
        return document
    }
}
