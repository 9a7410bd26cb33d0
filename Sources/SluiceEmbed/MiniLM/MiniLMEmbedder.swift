import Foundation
import SluiceCore

/// sentence-transformers' all-MiniLM-L6-v2 (384 dimensions), computed in process: the WordPiece
/// tokenizer, the BERT encoder through BLAS (`cblas_sgemm`), mean pooling and L2 normalisation.
///
/// The model files are read from a folder (``defaultDirectory(environment:)``) that
/// `scripts/fetch/10-minilm.sh` fills; the weights are memory-mapped, not copied. The forward pass is
/// blocking CPU work: it runs on the embedder's own threads (a ``BlockingExecutor``), never on Swift's
/// cooperative pool, with BLAS single-threaded so that workers × BLAS threads never exceed the
/// `threads` asked for. A batch is split across the threads by size.
///
/// Its ``tokenCounter`` is the model's tokenizer counting word pieces; ``limits`` caps an input at the
/// window less `[CLS]` and `[SEP]` (254 word pieces), so a chunker sized by both is never truncated.
///
/// With ``Precision/int8`` the dense layers run on int8 weights quantized at load and activations quantized
/// per row (integer dot products with AVX-512 VNNI or AVX2 where the CPU has them): faster, with vectors
/// close to fp32's but not equal, so the identity names another model (`all-MiniLM-L6-v2-int8`) and the
/// pipeline never mixes the two in one sink.
public final class MiniLMEmbedder: Embedder {
    /// The arithmetic of the dense layers.
    public enum Precision: String, Sendable, Hashable, CaseIterable {
        /// Single precision: the model's own computation.
        case fp32
        /// Dynamic quantization: int8 weights per output channel, activations per row.
        case int8
    }

    public let identity: EmbedderIdentity
    public let limits: EmbedderLimits
    /// The model's WordPiece tokenizer.
    public let tokenizer: WordPieceTokenizer
    public var tokenCounter: any TokenCounter { tokenizer }
    /// The folder the model was loaded from.
    public let directory: URL
    /// The dense layers' arithmetic.
    public let precision: Precision
    let encoder: MiniLMEncoder
    private let executor: BlockingExecutor
    private let workspaces = WorkspacePool()

    /// The model's name in the identity (`minilm/all-MiniLM-L6-v2@384`).
    public static let modelName = "all-MiniLM-L6-v2"

    /// The model's name in the int8 embedder's identity (`minilm/all-MiniLM-L6-v2-int8@384`).
    public static let int8ModelName = "all-MiniLM-L6-v2-int8"

    /// Loads the model.
    /// - Parameters:
    ///   - directory: The model folder (`model.safetensors`, `vocab.txt`, `config.json`,
    ///     `sentence_bert_config.json`, `1_Pooling/config.json`).
    ///   - threads: Worker threads for the forward pass (each runs single-threaded BLAS); defaults to
    ///     the number of cores.
    ///   - precision: fp32 (the default) or int8.
    /// - Throws: ``SluiceError/Code/configuration`` when a file is missing or describes a model this
    ///   embedder does not compute.
    public convenience init(
        directory: URL,
        threads: Int = ProcessInfo.processInfo.activeProcessorCount,
        precision: Precision = .fp32
    ) throws {
        try self.init(directory: directory, threads: threads, precision: precision, int8Kernel: nil)
    }

    /// Loads the model with a given int8 kernel (nil: `SLUICE_MINILM_INT8_KERNEL`, else the fastest).
    package init(
        directory: URL,
        threads: Int = ProcessInfo.processInfo.activeProcessorCount,
        precision: Precision,
        int8Kernel: MiniLMInt8Kernel?,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws {
        let configuration = try MiniLMConfiguration.load(directory: directory)
        let vocabularyURL = directory.appendingPathComponent("vocab.txt")
        guard let vocabulary = try? String(contentsOf: vocabularyURL, encoding: .utf8) else {
            throw SluiceError(
                .configuration,
                "\(vocabularyURL.path) is missing or not UTF-8 (run scripts/setup.sh, or set SLUICE_MODEL_DIR)"
            )
        }
        let tokenizer = try WordPieceTokenizer(
            vocabulary: vocabulary,
            maxSequenceLength: configuration.maxSequenceLength
        )
        guard tokenizer.vocabulary.count == configuration.vocabularySize else {
            throw SluiceError(
                .configuration,
                "\(vocabularyURL.path) has \(tokenizer.vocabulary.count) tokens; config.json says \(configuration.vocabularySize)"
            )
        }
        let file = try SafetensorsFile(url: directory.appendingPathComponent("model.safetensors"))
        let weights = try MiniLMWeights(file: file, configuration: configuration)
        let int8: MiniLMInt8Weights?
        switch precision {
        case .fp32: int8 = nil
        case .int8:
            let kernel = try MiniLMInt8Kernel.choose(int8Kernel, environment: environment)
            int8 = MiniLMInt8Weights(weights, configuration: configuration, kernel: kernel)
        }
        BLAS.useOneThread()
        self.directory = directory
        self.tokenizer = tokenizer
        self.precision = precision
        self.encoder = MiniLMEncoder(configuration: configuration, weights: weights, int8: int8)
        self.identity = EmbedderIdentity(
            provider: "minilm",
            model: precision == .int8 ? Self.int8ModelName : Self.modelName,
            dimensions: configuration.hiddenSize
        )
        self.limits = EmbedderLimits(
            maxBatchSize: 256,
            maxTokensPerInput: tokenizer.maxPiecesPerInput,
            maxTokensPerRequest: 256 * configuration.maxSequenceLength
        )
        self.executor = BlockingExecutor(label: "minilm", threads: max(1, threads))
    }

    deinit { executor.shutdown() }

    /// The int8 path's kernel, or nil for fp32.
    package var int8Kernel: MiniLMInt8Kernel? { encoder.int8?.kernel }

    /// Where the model files are: `SLUICE_MODEL_DIR`, else `$SLUICE_CACHE_DIR/models/all-MiniLM-L6-v2`,
    /// else `~/.cache/sluice/models/all-MiniLM-L6-v2` (where `scripts/setup.sh` puts them).
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let directory = environment["SLUICE_MODEL_DIR"], !directory.isEmpty {
            return URL(fileURLWithPath: (directory as NSString).expandingTildeInPath)
        }
        let cache =
            environment["SLUICE_CACHE_DIR"].flatMap { $0.isEmpty ? nil : ($0 as NSString).expandingTildeInPath }
            ?? (NSHomeDirectory() as NSString).appendingPathComponent(".cache/sluice")
        return URL(fileURLWithPath: cache).appendingPathComponent("models/all-MiniLM-L6-v2")
    }

    /// Embeds a batch on the embedder's threads.
    /// - Returns: One unit-length 384-value vector per text, in order. Text beyond the window (254 word
    ///   pieces) is truncated, as sentence-transformers does.
    public func embed(_ texts: [String]) async throws -> [[Float]] {
        guard !texts.isEmpty else { return [] }
        let parts = Self.split(texts, into: executor.threadCount)
        let encoder = self.encoder
        let tokenizer = self.tokenizer
        let workspaces = self.workspaces
        return try await withThrowingTaskGroup(of: (Int, [[Float]]).self) { group in
            for (index, range) in parts.enumerated() {
                let slice = Array(texts[range])
                group.addTask {
                    let vectors = try await self.executor.run {
                        let workspace = workspaces.take()
                        defer { workspaces.give(workspace) }
                        return Self.encode(slice, encoder: encoder, tokenizer: tokenizer, workspace: workspace)
                    }
                    return (index, vectors)
                }
            }
            var results = [[[Float]]](repeating: [], count: parts.count)
            for try await (index, vectors) in group { results[index] = vectors }
            return results.flatMap { $0 }
        }
    }

    /// The most tokens one forward pass takes; a larger part is encoded in several passes.
    static let tokensPerPass = 4096

    /// Tokenizes and encodes `texts` on the calling thread.
    static func encode(
        _ texts: [String],
        encoder: MiniLMEncoder,
        tokenizer: WordPieceTokenizer,
        workspace: MiniLMEncoder.Workspace
    ) -> [[Float]] {
        let sequences = texts.map { tokenizer.encode($0) }
        var vectors: [[Float]] = []
        vectors.reserveCapacity(texts.count)
        var start = 0
        while start < sequences.count {
            var end = start
            var tokens = 0
            while end < sequences.count && (end == start || tokens + sequences[end].count <= tokensPerPass) {
                tokens += sequences[end].count
                end += 1
            }
            vectors += encoder.encode(Array(sequences[start..<end]), workspace: workspace)
            start = end
        }
        return vectors
    }

    /// Splits `texts` into at most `parts` contiguous ranges of about equal UTF-8 size (at least 8 texts
    /// or 16 KiB each, so that a small batch is not scattered for nothing).
    static func split(_ texts: [String], into parts: Int) -> [Range<Int>] {
        let sizes = texts.map { $0.utf8.count + 16 }
        let total = sizes.reduce(0, +)
        let count = max(1, min(parts, texts.count / 8, total / 16_384))
        guard count > 1 else { return [0..<texts.count] }
        var ranges: [Range<Int>] = []
        var start = 0
        var accumulated = 0
        for (index, size) in sizes.enumerated() {
            accumulated += size
            if ranges.count < count - 1 && accumulated * count >= total * (ranges.count + 1) {
                ranges.append(start..<(index + 1))
                start = index + 1
            }
        }
        if start < texts.count { ranges.append(start..<texts.count) }
        return ranges
    }
}

/// Encoder workspaces, reused across batches and handed to one thread at a time.
private final class WorkspacePool: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var free: [MiniLMEncoder.Workspace] = []

    func take() -> MiniLMEncoder.Workspace {
        lock.lock()
        defer { lock.unlock() }
        return free.popLast() ?? MiniLMEncoder.Workspace()
    }

    func give(_ workspace: MiniLMEncoder.Workspace) {
        lock.lock()
        free.append(workspace)
        lock.unlock()
    }
}
