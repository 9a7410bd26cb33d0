import SluiceCore
import SluiceEmbed

extension PipelineComponents {
    /// The local all-MiniLM-L6-v2 embedder (`embed.provider: minilm`, in `embed.precision`), loaded from
    /// `SLUICE_MODEL_DIR` or the cache folder that `scripts/setup.sh` fills.
    /// - Throws: ``SluiceError/Code/configuration`` for another model or dimension count, or when the
    ///   model files are missing or unsupported.
    static func makeMiniLMEmbedder(_ configuration: PipelineConfiguration.Embed) throws -> any Embedder {
        if let model = configuration.model, model != MiniLMEmbedder.modelName {
            throw SluiceError(
                .configuration,
                "embed.model: the minilm provider has one model, \(MiniLMEmbedder.modelName) (got '\(model)')"
            )
        }
        guard configuration.dimensions == 384 else {
            throw SluiceError(
                .configuration,
                "embed.dimensions: \(MiniLMEmbedder.modelName) has 384 dimensions (got \(configuration.dimensions))"
            )
        }
        let precision: MiniLMEmbedder.Precision =
            switch configuration.precision {
            case .fp32: .fp32
            case .int8: .int8
            }
        return try MiniLMEmbedder(directory: MiniLMEmbedder.defaultDirectory(), precision: precision)
    }
}
