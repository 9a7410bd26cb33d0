extension PipelineConfiguration.Embed {
    /// Who computes the vectors (`embed.provider`), and what the pipeline needs to know of it before it
    /// has an embedder: whether it is served over HTTP, and how many requests to keep in flight.
    ///
    /// An open set, not an enum: each provider declares its facts where it is declared (the static members
    /// below), so no list of "remote" providers is kept anywhere else, and a provider added later, or one
    /// a library user registers (`EmbedderFactory.register(_:make:)` in SluicePipeline, which calls
    /// ``register(_:)``), breaks no caller (the shape of swift-service-lifecycle's `TerminationBehavior`).
    /// Two providers are the same when their names are.
    public struct Provider: Sendable, Hashable, CustomStringConvertible {
        /// The name in the pipeline file.
        public let rawValue: String
        /// Served over HTTP: `embed.base_url` must be an http(s) URL, the remote keys apply, and the
        /// tokenizer (`embed.tokenizer`) is among the settings that shape chunks.
        public let isRemote: Bool
        /// Requests (batches) in flight at once when `embed.parallelism` is not set.
        public let defaultParallelism: Int

        public init(_ name: String, isRemote: Bool, defaultParallelism: Int) {
            rawValue = name
            self.isRemote = isRemote
            self.defaultParallelism = max(1, defaultParallelism)
        }

        public var description: String { rawValue }

        public static func == (lhs: Provider, rhs: Provider) -> Bool { lhs.rawValue == rhs.rawValue }
        public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

        // Parallelism: hosted APIs (openai, azure-openai) 256. What bounds them is the account's rate limit,
        // which the rate budget paces to (configured or learned from the answers' headers), and the
        // adaptive limit halves on 429s and timeouts; a lower bound only adds latency rounds. On the
        // latency-bound benchmark (docs/BENCHMARKS.md, 2026-11-27) 16 in flight took 2.2× and 64 1.3× the
        // wall time of 256. Local models and servers that usually run beside Sluice (hash, minilm, ollama,
        // tei): 2, one batch per core; more in flight would only wait in the server's queue.

        /// A deterministic feature-hashing embedder, for tests.
        public static let hash = Provider("hash", isRemote: false, defaultParallelism: 2)
        /// all-MiniLM-L6-v2, run locally.
        public static let minilm = Provider("minilm", isRemote: false, defaultParallelism: 2)
        /// OpenAI's embeddings API.
        public static let openai = Provider("openai", isRemote: true, defaultParallelism: 256)
        /// An Azure OpenAI deployment.
        public static let azureOpenAI = Provider("azure-openai", isRemote: true, defaultParallelism: 256)
        /// An Ollama server.
        public static let ollama = Provider("ollama", isRemote: true, defaultParallelism: 2)
        /// Hugging Face's text-embeddings-inference.
        public static let tei = Provider("tei", isRemote: true, defaultParallelism: 2)

        private static let registry = NamedSettingRegistry([hash, minilm, openai, azureOpenAI, ollama, tei])

        /// The providers a pipeline file may name, in the order they were added: Sluice's own, then those
        /// registered.
        public static var known: [Provider] { registry.all }

        /// The known provider called `name`.
        public static func named(_ name: String) -> Provider? { registry.named(name) }

        /// Makes `provider` a name a pipeline file may use (replacing a provider of the same name).
        public static func register(_ provider: Provider) { registry.register(provider) }
    }
}
