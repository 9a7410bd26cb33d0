import SluiceCore
import SluiceState

/// Fills in vectors already paid for: the embedding cache is keyed by (embedder identity, chunk hash),
/// so identical text is embedded once per model, across documents and runs.
package struct DedupeStep: Sendable {
    package let checkpoint: CheckpointStore
    package let embedder: EmbedderIdentity
    package let tally: RunTally

    package func callAsFunction(_ document: DocumentWork) async -> DocumentWork {
        var document = document
        do {
            let cached = try checkpoint.cachedEmbeddings(document.chunks.map(\.hash), embedder: embedder)
            var hits = 0
            for index in document.chunks.indices {
                if let vector = cached[document.chunks[index].hash] {
                    document.chunks[index].vector = vector
                    hits += 1
                }
            }
            tally.update {
                $0.cacheHits += hits
                $0.chunks += document.chunks.count
            }
        } catch {
            document.fail(error, as: .state)
        }
        return document
    }
}
