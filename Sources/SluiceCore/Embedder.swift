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

    public init(maxBatchSize: Int, maxTokensPerInput: Int, maxTokensPerRequest: Int) {
        self.maxBatchSize = maxBatchSize
        self.maxTokensPerInput = maxTokensPerInput
        self.maxTokensPerRequest = maxTokensPerRequest
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
}
