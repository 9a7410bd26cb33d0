/// The identity of an embedding model: vectors of two identities never mix in one sink.
public struct EmbedderIdentity: Sendable, Hashable, Codable, CustomStringConvertible {
    public var provider: String
    public var model: String
    public var dimensions: Int

    public init(provider: String, model: String, dimensions: Int) {
        self.provider = provider
        self.model = model
        self.dimensions = dimensions
    }

    /// `provider/model@dimensions`, the form stored in checkpoints and sinks.
    public var description: String { "\(provider)/\(model)@\(dimensions)" }
}

/// Per-request limits of an embedding provider, used to form batches.
public struct EmbedderLimits: Sendable, Hashable {
    public var maxBatchSize: Int
    public var maxTokensPerInput: Int
    public var maxTokensPerRequest: Int
    /// The largest request body in bytes (UTF-8 text of the batch plus framing); `Int.max`: no limit.
    public var maxRequestBytes: Int

    public init(maxBatchSize: Int, maxTokensPerInput: Int, maxTokensPerRequest: Int, maxRequestBytes: Int = .max) {
        self.maxBatchSize = maxBatchSize
        self.maxTokensPerInput = maxTokensPerInput
        self.maxTokensPerRequest = maxTokensPerRequest
        self.maxRequestBytes = maxRequestBytes
    }
}

/// Turns texts into vectors.
public protocol Embedder: Sendable {
    var identity: EmbedderIdentity { get }
    var limits: EmbedderLimits { get }
    /// The counter the chunker must use so that chunks fit this embedder's window.
    var tokenCounter: any TokenCounter { get }
    /// Embeds a batch; returns one vector per text, in order.
    /// - Throws: ``SluiceError``; ``SluiceError/Code/providerRefused`` stops the run (exit code 5).
    func embed(_ texts: [String]) async throws -> [[Float]]
    /// Embeds a batch whose token counts (by ``tokenCounter``) are known; remote embedders use them for
    /// their token budget instead of counting again. The default calls ``embed(_:)``.
    func embed(_ texts: [String], tokenCounts: [Int]) async throws -> [[Float]]
    /// Counters of the requests this embedder made (remote embedders), or nil when it makes none.
    var requestStats: EmbedderRequestStats? { get }
    /// A cheap check, before a run takes any document, that the embedder can be reached (remote
    /// embedders: the endpoint answers HTTP at all; no embedding is requested). The default does nothing.
    /// - Throws: ``SluiceError/Code/dependencyUnavailable`` when it cannot be reached.
    func checkReachable() async throws
}

extension Embedder {
    public func embed(_ texts: [String], tokenCounts: [Int]) async throws -> [[Float]] { try await embed(texts) }
    public var requestStats: EmbedderRequestStats? { nil }
    public func checkReachable() async throws {}
}

/// What a remote embedder did on the wire, since it was created.
public struct EmbedderRequestStats: Sendable, Hashable {
    /// HTTP requests sent (retries and split halves included).
    public var requests = 0
    /// Requests repeated after a transient failure or a rate limit.
    public var retries = 0
    /// Answers with status 429 (or a provider's "queue full").
    public var rateLimited = 0
    /// Batches split in two because the provider found them too large.
    public var splits = 0
    /// Tokens of the inputs the provider embedded.
    public var tokens = 0

    public init() {}
}
