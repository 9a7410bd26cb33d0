import CHNSW
import Foundation
import SluiceTesting
import Testing

/// The graphs' 8-bit quantizer (`CHNSW`'s `quantized`, reached through `sluice_ivf_encode`, "exactly as the
/// graph quantizes its vectors"): its SSE2 loops (session 34) must give the very bytes of the scalar algorithm
/// — L2-normalize through a `Double` sum, a scale of the largest |component| / 127, each level rounded to
/// nearest even and clamped to ±127 — so stored codes, saved graphs and PQ training stay as they were.
@Suite struct LocalANNQuantizerTests {
    /// The scalar algorithm, written out here as the reference.
    static func reference(_ vector: [Float]) -> [UInt8] {
        var sum = 0.0
        for value in vector { sum += Double(value) * Double(value) }
        let norm: Float = sum > 0 ? Float(1.0 / sum.squareRoot()) : 0
        var largest: Float = 0
        for value in vector { largest = max(largest, abs(value * norm)) }
        let scale: Float = largest > 0 ? largest / 127 : 0
        var out = withUnsafeBytes(of: scale) { Array($0) }
        for value in vector {
            let level = scale > 0 ? (value * norm / scale).rounded(.toNearestOrEven) : 0
            out.append(UInt8(bitPattern: Int8(max(-127, min(127, level)))))
        }
        return out
    }

    static func encoded(_ vector: [Float]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: sluice_ivf_code_bytes(vector.count))
        sluice_ivf_encode(vector, vector.count, &out)
        return out
    }

    @Test(
        "the quantizer gives the scalar algorithm's bytes at every dimension, for clustered, spiky, tiny and zero vectors",
        arguments: [1, 3, 4, 15, 16, 17, 31, 48, 100, 384, 385, 1536]
    )
    func quantizerMatchesTheScalarAlgorithm(dimensions: Int) {
        var generator = ClusteredVectors(dimensions: dimensions, clusters: 4, spread: 0.7, seed: UInt64(dimensions))
        var vectors = generator.next(200)
        var spiky = [Float](repeating: 1e-3, count: dimensions)
        spiky[dimensions / 2] = -40
        vectors.append(spiky)
        vectors.append([Float](repeating: 0, count: dimensions))
        vectors.append((0..<dimensions).map { Float($0 % 2 == 0 ? 1e-30 : -3e-31) })
        // Every level from -127 to 127 used.
        vectors.append((0..<dimensions).map { Float(($0 % 255) - 127) + 0.5 })
        for vector in vectors {
            #expect(Self.encoded(vector) == Self.reference(vector), "\(dimensions) dimensions")
        }
    }
}
