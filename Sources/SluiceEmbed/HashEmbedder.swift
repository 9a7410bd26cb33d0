import SluiceCore

/// A deterministic feature-hashing embedder: no model, no network, the same vector for the same text
/// on every machine.
///
/// Text is split into lowercased words (runs of letters, digits and combining marks, Unicode-aware;
/// each CJK ideograph is a word of its own; punctuation and symbols are dropped). Each word (a unigram)
/// and each pair of adjacent words (a bigram, `"new york"`, weight 0.5) is hashed with XXH3-64: the low
/// 32 bits pick one of ``EmbedderIdentity/dimensions`` buckets and the top bit the sign, and the vector
/// adds ±weight there. The vector is then scaled to unit length, so the dot product of two vectors is
/// their cosine similarity and texts that share words score higher than texts that do not.
///
/// A text with no words (empty, white space, punctuation only) has no features. Rather than the zero
/// vector, which has no direction and breaks cosine distance in most stores, it gets the unit vector
/// along bucket 0: every such text embeds the same, and the vector is still unit length.
///
/// Identity: provider `hash`, model `feature-hash-v1`. Any change to the tokenization, the features,
/// the weights or the hashing must change the model name, or old and new vectors would mix in a sink.
public struct HashEmbedder: Embedder {
    public let identity: EmbedderIdentity
    /// Large batches; the token limits are effectively unlimited (there is no context window), but small
    /// enough that batching arithmetic on them cannot overflow.
    public let limits: EmbedderLimits
    public let tokenCounter: any TokenCounter

    /// The weight of a bigram feature; a unigram weighs 1.
    static let bigramWeight = 0.5

    /// Creates a hashing embedder.
    /// - Parameters:
    ///   - dimensions: The length of the vectors; at least 1. Defaults to 384, as MiniLM's.
    ///   - tokenCounter: The counter the chunker uses for this embedder (`WordTokenCounter` from
    ///     SluiceChunk matches how this embedder sees words).
    public init(dimensions: Int = 384, tokenCounter: any TokenCounter) {
        precondition(dimensions > 0, "dimensions must be positive")
        self.identity = EmbedderIdentity(provider: "hash", model: "feature-hash-v1", dimensions: dimensions)
        self.limits = EmbedderLimits(
            maxBatchSize: 1024,
            maxTokensPerInput: Int(Int32.max),
            maxTokensPerRequest: Int(Int32.max)
        )
        self.tokenCounter = tokenCounter
    }

    /// Embeds a batch on the calling task: the work is a single pass over each text.
    /// - Parameter texts: The texts to embed.
    /// - Returns: One unit-length vector of ``EmbedderIdentity/dimensions`` values per text, in order.
    public func embed(_ texts: [String]) async -> [[Float]] {
        texts.map { vector(for: $0) }
    }

    /// The embedding of one text.
    func vector(for text: String) -> [Float] {
        let dimensions = identity.dimensions
        var sums = [Double](repeating: 0, count: dimensions)
        UTF8Decoding.withBytes(of: text.lowercased()) { bytes in
            let words = Self.wordRanges(inLowercased: bytes)
            var bigram: [UInt8] = []
            for (index, word) in words.enumerated() {
                let unigram = UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[word]))
                Self.add(xxh3_64(bytes: unigram), weight: 1, to: &sums)
                if index > 0 {
                    // The two words joined by a space.
                    bigram.removeAll(keepingCapacity: true)
                    bigram.append(contentsOf: bytes[words[index - 1]])
                    bigram.append(0x20)
                    bigram.append(contentsOf: bytes[word])
                    let hash = bigram.withUnsafeBytes { xxh3_64(bytes: $0) }
                    Self.add(hash, weight: Self.bigramWeight, to: &sums)
                }
            }
        }
        let norm = sums.reduce(0) { $0 + $1 * $1 }.squareRoot()
        guard norm > 0 else {
            // No words (or, vanishingly rarely, features that cancel out): the fixed unit vector.
            var unit = [Float](repeating: 0, count: dimensions)
            unit[0] = 1
            return unit
        }
        return sums.map { Float($0 / norm) }
    }

    /// Adds ±`weight` to the bucket a feature's XXH3-64 `hash` picks.
    private static func add(_ hash: UInt64, weight: Double, to sums: inout [Double]) {
        let bucket = Int((hash & 0xFFFF_FFFF) % UInt64(sums.count))
        sums[bucket] += hash >> 63 == 0 ? weight : -weight
    }
}
