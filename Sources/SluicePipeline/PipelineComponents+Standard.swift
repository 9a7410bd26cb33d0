import Foundation
import Logging
import SluiceChunk
import SluiceCore
import SluiceEmbed
import SluiceExtract
import SluiceSinks

extension PipelineComponents {
    /// The components a pipeline file names: extractors, the chunker sized by the embedder's token
    /// counter, the embedder and the sink.
    /// - Parameters:
    ///   - extractWorker: How to start PDF/OCR worker processes (the CLI passes its own binary); nil runs
    ///     that extraction in this process.
    ///   - logger: Where the worker pool warns when it turns to its fallback program.
    /// - Throws: ``SluiceError/Code/configuration`` for a provider or store that cannot be set up.
    public static func standard(
        configuration: PipelineConfiguration,
        readOnlySink: Bool = false,
        extractWorker: ExtractWorkerPool.Command? = nil,
        logger: Logger? = nil
    ) throws -> PipelineComponents {
        let sink = try SinkFactory.make(configuration, readOnly: readOnlySink)
        if sink.embedsText {
            return storeEmbedding(
                configuration: configuration,
                sink: sink,
                extractWorker: extractWorker,
                logger: logger
            )
        }
        // Reading commands (export, search) work without an API key in the environment.
        let embedder = try makeEmbedder(
            configuration.embed,
            resolve: configuration.resolve,
            requireCredentials: !readOnlySink
        )
        // A chunk over the embedder's per-input limit would be truncated or refused: never make one.
        // chunk.max_tokens is capped at the limit (MiniLM: 254 word pieces, which with [CLS] and [SEP] is
        // its 256-token window; OpenAI: 8,192).
        let maxTokens = min(configuration.chunk.maxTokens, embedder.limits.maxTokensPerInput)
        // With chunk.context, the chunks also leave room in the window for the prefix (ChunkContext).
        let chunkTokens = ChunkContext.chunkBudget(
            maxTokens: configuration.chunk.maxTokens,
            maxInputTokens: embedder.limits.maxTokensPerInput,
            context: configuration.chunk.context
        )
        var adjustments: [String] = []
        // Said when it matters: 256 for MiniLM names its window, which holds 254 pieces and [CLS] and [SEP].
        if configuration.chunk.maxTokens > maxTokens + 2 {
            adjustments.append(
                "chunk.max_tokens \(configuration.chunk.maxTokens) is above the embedder's limit of \(maxTokens) tokens per input (\(embedder.identity)): chunks are cut at \(maxTokens)"
            )
        }
        let overlapTokens = min(configuration.chunk.overlapTokens, chunkTokens - 1)
        let chunker: any Chunker
        switch configuration.chunk.strategy {
        case .recursive:
            chunker = RecursiveChunker(
                maxTokens: chunkTokens,
                overlapTokens: overlapTokens,
                counter: embedder.tokenCounter
            )
        case .structured:
            chunker = StructuredChunker(
                maxTokens: chunkTokens,
                overlapTokens: overlapTokens,
                counter: embedder.tokenCounter
            )
        }
        var components = PipelineComponents(
            extractors: .standard(
                configuration: configuration.extract,
                workers: workers(configuration, extractWorker: extractWorker, logger: logger)
            ),
            chunker: chunker,
            embedder: embedder,
            sink: sink
        )
        components.adjustments = adjustments
        return components
    }

    /// The extraction worker pool, when `extract.isolate` asks for one and the caller can start workers.
    static func workers(
        _ configuration: PipelineConfiguration,
        extractWorker: ExtractWorkerPool.Command?,
        logger: Logger?
    ) -> ExtractWorkerPool? {
        extractWorker.flatMap { command in
            configuration.extract.isolate
                ? ExtractWorkerPool(
                    command: command,
                    options: .init(ocr: configuration.extract.ocr, pdf: configuration.extract.pdf),
                    size: configuration.extract.parallelism,
                    notice: { logger?.warning("\($0)") }
                )
                : nil
        }
    }

    /// The components for a store that embeds the text itself (``VectorSink/embedsText``): each document
    /// whole as one chunk, and no embedder of Sluice's (``StoreEmbedding``). `embed.*` and `chunk.*` keys
    /// set in the pipeline file are not used, and said so.
    static func storeEmbedding(
        configuration: PipelineConfiguration,
        sink: any VectorSink,
        extractWorker: ExtractWorkerPool.Command?,
        logger: Logger?
    ) -> PipelineComponents {
        var components = PipelineComponents(
            extractors: .standard(
                configuration: configuration.extract,
                workers: workers(configuration, extractWorker: extractWorker, logger: logger)
            ),
            chunker: WholeDocumentChunker(),
            embedder: StoreEmbedding(store: configuration.sink.kind),
            sink: sink
        )
        let unused = configuration.notes.keysSet.filter { $0.hasPrefix("embed.") || $0.hasPrefix("chunk.") }.sorted()
        if !unused.isEmpty {
            components.adjustments.append(
                "\(unused.joined(separator: ", ")): not used: sink.kind \(configuration.sink.kind) chunks and embeds each document itself (Sluice sends the text, no vectors)"
            )
        }
        return components
    }

    /// The embedder a pipeline file names.
    public static func makeEmbedder(
        _ configuration: PipelineConfiguration.Embed,
        resolve: (String) -> URL = { PipelineConfiguration.resolve($0, against: nil) },
        requireCredentials: Bool = true
    ) throws -> any Embedder {
        if configuration.precision != .fp32 && configuration.provider != .minilm {
            throw SluiceError(
                .configuration,
                "embed.precision: \(configuration.precision.rawValue) is for the minilm provider; \(configuration.provider.rawValue) computes in its own precision"
            )
        }
        switch configuration.provider {
        case .openai, .azureOpenAI, .ollama, .tei:
            return try makeRemoteEmbedder(configuration, resolve: resolve, requireCredentials: requireCredentials)
        case .hash:
            if let model = configuration.model, model != "feature-hash-v1" {
                throw SluiceError(
                    .configuration,
                    "embed.model: the hash provider has one model, feature-hash-v1 (got '\(model)')"
                )
            }
            return HashEmbedder(dimensions: configuration.dimensions, tokenCounter: WordTokenCounter())
        case .minilm:
            return try makeMiniLMEmbedder(configuration)
        default:
            guard let make = EmbedderFactory.builder(for: configuration.provider) else {
                throw SluiceError(
                    .configuration,
                    "embed.provider: '\(configuration.provider)' has no embedder registered (EmbedderFactory.register)"
                )
            }
            return try make(configuration, requireCredentials)
        }
    }
}
