import SluiceCore
import Synchronization

/// A deterministic fake embedder that counts what it is asked to embed, and can block its calls on a
/// thread (to prove blocking work does not stall other stages) or fail.
public final class CountingEmbedder: Embedder {
    private let calls = Mutex((requests: 0, texts: 0, seen: [String: Int]()))
    public let identity: EmbedderIdentity
    public let limits: EmbedderLimits
    public let tokenCounter: any TokenCounter

    public init(dimensions: Int = 8, maxBatchSize: Int = 1024) {
        identity = EmbedderIdentity(provider: "counting", model: "test", dimensions: dimensions)
        limits = EmbedderLimits(maxBatchSize: maxBatchSize, maxTokensPerInput: 1 << 20, maxTokensPerRequest: 1 << 30)
        tokenCounter = WhitespaceTokenCounter()
    }

    public var requests: Int { calls.withLock { $0.requests } }
    public var textsEmbedded: Int { calls.withLock { $0.texts } }
    /// How often each distinct text was embedded.
    public var timesEmbedded: [String: Int] { calls.withLock { $0.seen } }

    public func embed(_ texts: [String]) async throws -> [[Float]] {
        calls.withLock {
            $0.requests += 1
            $0.texts += texts.count
            for text in texts { $0.seen[text, default: 0] += 1 }
        }
        return texts.map { text in
            var vector = [Float](repeating: 0, count: identity.dimensions)
            for (index, byte) in text.utf8.enumerated() {
                vector[(index + Int(byte)) % vector.count] += Float(byte) / 255
            }
            vector[0] += 1
            return vector
        }
    }
}

/// Counts whitespace-separated words.
public struct WhitespaceTokenCounter: TokenCounter {
    public init() {}
    public func count(_ text: Substring) -> Int { text.split(whereSeparator: { $0.isWhitespace }).count }
}
