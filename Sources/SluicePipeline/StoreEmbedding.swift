import SluiceChunk
import SluiceCore

/// The embedder of a pipeline whose store embeds the text itself (``VectorSink/embedsText``): it computes
/// nothing and sends nothing, answering an empty vector per text, so that the stages run unchanged and the
/// store receives the text alone. Its identity (`store/<sink.kind>@0`) is what the state records, so that
/// a later switch to another store or embedder is seen as a change of embedder.
struct StoreEmbedding: Embedder {
    let identity: EmbedderIdentity
    /// Whole documents, however long: the store chunks them (its own limits apply there).
    let limits = EmbedderLimits(maxBatchSize: 64, maxTokensPerInput: 1 << 40, maxTokensPerRequest: 1 << 44)
    let tokenCounter: any TokenCounter = WordTokenCounter()

    init(store: PipelineConfiguration.Sink.Kind) {
        identity = EmbedderIdentity(provider: "store", model: store.rawValue, dimensions: 0)
    }

    func embed(_ texts: [String]) async throws -> [[Float]] { texts.map { _ in [] } }
}
