import Foundation
import SluiceCore
import SluiceExtract
import SluiceState

/// What the documents a run would write cost the embedder, as `sluice run --dry-run` estimates it without
/// OCR or PDF parsing: their texts (from the extraction cache, or extracted again where that is cheaper
/// than a lookup: text, HTML, Office files) are chunked and hashed as the run would, and the chunks whose
/// vectors the embedding cache holds (or another chunk of the run repeats, or the run's active generation
/// embeds before a candidate with the same embedder) cost nothing.
public struct DryRunCost: Sendable, Hashable, Codable {
    /// Documents whose text could be had without extracting anew: counted below.
    public var documents = 0
    /// Documents to extract first (a PDF or a scan not in the extraction cache, a file that cannot be read
    /// now, or one of a remote source): their chunks and tokens are not counted.
    public var notEstimated = 0
    /// Chunks of the counted documents.
    public var chunks = 0
    /// Of those, chunks whose vector the embedding cache holds, or that repeat another chunk of the run.
    public var chunksCached = 0
    /// Tokens sent to the embedder for the other chunks (the context prefix of `chunk.context` included).
    public var tokens = 0
    /// The chunks counted as sent to the embedder, for the estimate of the generation the same run builds
    /// next (not part of the report's JSON).
    public var embedded = DryRunEmbedded()

    public init() {}

    enum CodingKeys: String, CodingKey {
        case documents, notEstimated, chunks, chunksCached, tokens
    }
}

/// The chunks a dry run counts as sent to the embedder, and the embedder. A run with a candidate generation
/// runs the active one first and the candidate after it, sharing the state's embedding cache: a chunk the
/// active generation's part embeds costs the candidate's nothing when the candidate's embedder is the same
/// (session 47's campaign: the dry run counted such chunks twice).
public struct DryRunEmbedded: Sendable, Hashable {
    /// The embedder those chunks go to; nil before any estimate.
    public var embedder: EmbedderIdentity?
    /// The hashes of the chunks (of what the embedder is sent) counted so far in the run.
    public var hashes: Set<ContentHash> = []

    public init(embedder: EmbedderIdentity? = nil, hashes: Set<ContentHash> = []) {
        self.embedder = embedder
        self.hashes = hashes
    }
}

extension Pipeline {
    /// Estimates what embedding `files` costs (``DryRunCost``), without extracting: blocking reads of the
    /// files and the state, run on `executor`.
    func estimateCost(
        of files: [SourceFile],
        readsLocally: Bool,
        checkpoint: CheckpointStore,
        after earlier: DryRunEmbedded,
        on executor: BlockingExecutor
    ) async throws -> DryRunCost {
        let registry = components.extractors
        let chunker = components.chunker
        let embedder = components.embedder.identity
        let maxTextBytes = configuration.extract.maxTextBytes
        let hashing = HashStep(
            context: ChunkContext(
                configuration.chunk.context,
                counter: components.embedder.tokenCounter,
                maxInputTokens: components.embedder.limits.maxTokensPerInput
            )
        )
        return try await executor.run {
            var cost = DryRunCost()
            // The chunks of the run so far: those of the generation built before this one count when they
            // go to the same embedder (they will be in the embedding cache by then).
            var seen = earlier.embedder == embedder ? earlier.hashes : []
            for file in files {
                guard readsLocally, let bytes = try? file.open().readAll() else {
                    cost.notEstimated += 1
                    continue
                }
                let input = ExtractionInput(
                    key: file.key,
                    fileURL: file.url,
                    bytes: bytes,
                    fileIdentity: file.identity,
                    followsSymlink: file.followsSymlink,
                    maxTextBytes: TextBudget(setting: maxTextBytes, fileSize: bytes.count).limit
                )
                // What the run would read: the cached extraction of an extractor whose work is kept (PDF,
                // OCR), or the extraction itself from one cheaper to run again than to look up (text, HTML).
                guard let extractor = registry.extractor(for: input),
                    let text = extractor.cacheIdentity.map({
                        try? checkpoint.cachedExtraction(content: ContentHash(of: bytes), identity: $0)
                    }) ?? (try? extractor.extract(input))
                else {
                    cost.notEstimated += 1
                    continue
                }
                var chunks = chunker.chunk(text)
                if let title = text.metadata["title"], !title.isEmpty {
                    for index in chunks.indices where chunks[index].metadata["title"] == nil {
                        chunks[index].metadata["title"] = title
                    }
                }
                let prepared = hashing.hashed(chunks, key: file.key)
                let cached = try checkpoint.cachedEmbeddings(prepared.map(\.hash), embedder: embedder)
                cost.documents += 1
                for chunk in prepared {
                    cost.chunks += 1
                    if cached[chunk.hash] != nil || !seen.insert(chunk.hash).inserted {
                        cost.chunksCached += 1
                    } else {
                        cost.tokens += chunk.chunk.tokenCount + chunk.embedPrefixTokens
                    }
                }
            }
            cost.embedded = DryRunEmbedded(embedder: embedder, hashes: seen)
            return cost
        }
    }
}
