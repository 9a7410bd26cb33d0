import CHNSW
import Foundation

/// How the IVF index chooses its lists (docs/LOCAL_INDEX.md, "Training"): nlist = 2√n centroids by
/// spherical k-means (unit vectors, nearest by inner product) on a sample of the stored vectors, held as
/// their records' labels and read from the store each round (``LocalIVFSample``), with a bounded number of
/// iterations and a seeded generator, so that the same store trains the same lists.
enum LocalIVFTraining {
    /// A new epoch is trained when the store holds this many times the vectors the current one was trained on.
    static let retrainGrowth = 4
    /// k-means rounds.
    static let iterations = 10
    /// The most sample vectors a list (64 measured 15% less scan than 16 for the same recall).
    static let mostPerList = 64
    /// The fewest a list, whatever ``sampleBytes`` says.
    static let fewestPerList = 16
    /// The sample's bound, in the bytes its vectors' 8-bit codes would take (16 MB: at a million 384-d vectors,
    /// 21 a list). It bounds k-means' work; the sample itself holds 8 bytes a vector (``LocalIVFSample``).
    static let sampleBytes = 16 << 20
    /// Vectors k-means reads from the store at a time, in one read transaction (384 KB of floats at 384
    /// dimensions).
    static let block = 256
    /// The generator's seed: a fixed number, so runs are deterministic.
    static let seed: UInt64 = 0x5EED_1F5

    /// nlist for a store of `vectors`: 2√n, at least 1.
    static func lists(forVectors vectors: Int) -> Int {
        max(1, Int((2 * Double(vectors).squareRoot()).rounded()))
    }

    /// Vectors sampled to train `lists` lists of `dimensions`.
    static func sampleSize(lists: Int, dimensions: Int) -> Int {
        let fitting = sampleBytes / sluice_ivf_code_bytes(dimensions)
        return max(fewestPerList * lists, min(mostPerList * lists, fitting))
    }

    /// `lists` unit centroids (flat, `lists` × dimensions) from `sample`: the first centroids are distinct
    /// sample vectors chosen by the seeded generator; each round assigns every vector to its nearest centroid
    /// and moves each centroid to its vectors' normalized mean; a list left empty takes a sample vector chosen
    /// by the generator. The sample's vectors are read from the store ``block`` at a time, every round (a
    /// vector gone since the sample was taken is left out: a first centroid it was to be stays zero, and its
    /// list takes another vector once it is left empty). Empty when `stop` says so before a round.
    static func centroids(sample: LocalIVFSample, lists: Int, stop: () -> Bool = { false }) throws -> [Float] {
        let (count, dimensions) = (sample.count, sample.dimensions)
        guard count > 0, lists > 0 else { return [] }
        var random = SplitMix(seed: seed)
        var order = Array(0..<count)
        order.shuffle(using: &random)
        var centroids = [Float](repeating: 0, count: lists * dimensions)
        var vectors = [Float]()
        for i in 0..<lists {
            let slot = order[i % count]
            guard try sample.read(slot..<slot + 1, into: &vectors) == 1 else { continue }
            centroids.replaceSubrange(i * dimensions..<(i + 1) * dimensions, with: vectors)
        }
        var nearest = [UInt32](repeating: 0, count: min(block, count))
        for _ in 0..<iterations {
            if stop() { return [] }
            var sums = [Float](repeating: 0, count: lists * dimensions)
            var members = [Int](repeating: 0, count: lists)
            for start in stride(from: 0, to: count, by: block) {
                let rows = try sample.read(start..<min(count, start + block), into: &vectors)
                vectors.withUnsafeBufferPointer { vectors in
                    centroids.withUnsafeBufferPointer { centroids in
                        nearest.withUnsafeMutableBufferPointer {
                            sluice_ivf_nearest(
                                centroids.baseAddress,
                                lists,
                                dimensions,
                                vectors.baseAddress,
                                rows,
                                $0.baseAddress
                            )
                        }
                    }
                }
                for v in 0..<rows {
                    let list = Int(nearest[v])
                    members[list] += 1
                    for d in 0..<dimensions { sums[list * dimensions + d] += vectors[v * dimensions + d] }
                }
            }
            for list in 0..<lists {
                let row = list * dimensions
                if members[list] == 0 {
                    let pick = Int(random.next() % UInt64(count))
                    guard try sample.read(pick..<pick + 1, into: &vectors) == 1 else { continue }
                    centroids.replaceSubrange(row..<row + dimensions, with: vectors)
                    continue
                }
                var norm: Float = 0
                for d in 0..<dimensions { norm += sums[row + d] * sums[row + d] }
                norm = norm.squareRoot()
                guard norm > 0 else { continue }
                for d in 0..<dimensions { centroids[row + d] = sums[row + d] / norm }
            }
        }
        return centroids
    }

    /// `vector` scaled to unit length (a zero vector stays zero).
    static func unit(_ vector: [Float]) -> [Float] {
        let norm = vector.reduce(Float(0)) { $0 + $1 * $1 }.squareRoot()
        return norm > 0 ? vector.map { $0 / norm } : vector
    }

    /// SplitMix64: a small generator whose sequence is fixed by its seed.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }
}
