import SluiceChunk
import SluiceCore
import SluiceEmbed
import SluiceExtract
import SluiceSinks

extension PipelineComponents {
    /// The components a pipeline file names: extractors, the chunker sized by the embedder's token
    /// counter, the embedder and the sink.
    /// - Throws: ``SluiceError/Code/configuration`` for an unknown provider or sink kind.
    public static func standard(configuration: PipelineConfiguration, readOnlySink: Bool = false) throws -> PipelineComponents {
        let embedder = try makeEmbedder(configuration.embed)
        // A chunk never exceeds what the embedder takes per input (MiniLM: 254 word pieces, which with
        // [CLS] and [SEP] is its 256-token window), so no chunk is silently truncated.
        let maxTokens = min(configuration.chunk.maxTokens, embedder.limits.maxTokensPerInput)
        let overlapTokens = min(configuration.chunk.overlapTokens, maxTokens - 1)
        let chunker: any Chunker
        switch configuration.chunk.strategy {
        case "recursive":
            chunker = RecursiveChunker(maxTokens: maxTokens, overlapTokens: overlapTokens, counter: embedder.tokenCounter)
        case "structured":
            chunker = StructuredChunker(maxTokens: maxTokens, overlapTokens: overlapTokens, counter: embedder.tokenCounter)
        default:
            throw SluiceError(.configuration, "chunk.strategy: '\(configuration.chunk.strategy)' is not supported")
        }
        let sink: any VectorSink
        switch configuration.sink.kind {
        case "local":
            sink = try LocalSink(directory: configuration.resolve(configuration.sink.path), readOnly: readOnlySink)
        default:
            throw SluiceError(.configuration, "sink.kind: '\(configuration.sink.kind)' is not supported")
        }
        return PipelineComponents(extractors: .standard(configuration: configuration.extract), chunker: chunker, embedder: embedder, sink: sink)
    }

    /// The embedder a pipeline file names.
    public static func makeEmbedder(_ configuration: PipelineConfiguration.Embed) throws -> any Embedder {
        switch configuration.provider {
        case "hash":
            if let model = configuration.model, model != "feature-hash-v1" {
                throw SluiceError(.configuration, "embed.model: the hash provider has one model, feature-hash-v1 (got '\(model)')")
            }
            return HashEmbedder(dimensions: configuration.dimensions, tokenCounter: WordTokenCounter())
        case "minilm":
            return try makeMiniLMEmbedder(configuration)
        default:
            throw SluiceError(.configuration, "embed.provider: '\(configuration.provider)' is not supported")
        }
    }
}
