import Foundation

/// Unit vectors with cluster structure, as text embeddings have (topics), for measuring the recall of an
/// approximate index: uniform random vectors are all nearly orthogonal in high dimensions, so any index
/// looks good or bad on them for the wrong reasons.
///
/// Each vector is a cluster centre (a random unit vector) plus Gaussian noise of norm about `spread`,
/// normalized; clusters are picked uniformly. The same seed gives the same vectors.
package struct ClusteredVectors: Sendable {
    package let dimensions: Int
    package let spread: Float
    private let centres: [[Float]]
    private var rng: SplitMix64

    package init(dimensions: Int, clusters: Int, spread: Float = 1.0, seed: UInt64) {
        self.dimensions = dimensions
        self.spread = spread
        var rng = SplitMix64(seed: seed)
        centres = (0..<clusters).map { _ in
            Self.normalized((0..<dimensions).map { _ in Self.gaussian(&rng) })
        }
        self.rng = rng
    }

    /// The next vector.
    package mutating func next() -> [Float] {
        let centre = centres[Int(rng.next() % UInt64(centres.count))]
        let scale = spread / Float(dimensions).squareRoot()
        return Self.normalized(centre.map { $0 + scale * Self.gaussian(&rng) })
    }

    /// The next `count` vectors.
    package mutating func next(_ count: Int) -> [[Float]] { (0..<count).map { _ in next() } }

    /// A uniformly random unit vector (no structure), from the same generator.
    package mutating func uniform() -> [Float] {
        Self.normalized((0..<dimensions).map { _ in Self.gaussian(&rng) })
    }

    private static func gaussian(_ rng: inout SplitMix64) -> Float {
        // Box–Muller; u1 in (0, 1] so that the logarithm is finite.
        let u1 = (Double(rng.next() >> 11) + 1) / 9_007_199_254_740_992
        let u2 = Double(rng.next() >> 11) / 9_007_199_254_740_992
        return Float((-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2))
    }

    private static func normalized(_ vector: [Float]) -> [Float] {
        let norm = vector.reduce(0) { $0 + $1 * $1 }.squareRoot()
        return norm > 0 ? vector.map { $0 / norm } : vector
    }
}
