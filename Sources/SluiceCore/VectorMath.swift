/// Small vector helpers shared by the stores that search by brute force.
package enum VectorMath {
    /// Cosine similarity of two vectors (0 when either is zero).
    package static func cosine(_ a: [Float], _ b: [Float]) -> Float {
        var dot: Float = 0
        var na: Float = 0
        var nb: Float = 0
        for i in 0..<min(a.count, b.count) {
            dot += a[i] * b[i]
            na += a[i] * a[i]
            nb += b[i] * b[i]
        }
        return na > 0 && nb > 0 ? dot / (na.squareRoot() * nb.squareRoot()) : 0
    }
}

extension VectorMath {
    /// Why `vector` must not be stored, or nil when it may: a value that is not finite (NaN, ±infinity —
    /// a float32 above about 3.4e38 becomes infinity) or values so large that the squared norm overflows
    /// float32, which makes every cosine with it NaN. Such a vector matches nothing, cannot be written as
    /// JSON and is refused by some stores.
    package static func problem(_ vector: [Float]) -> String? {
        var squares: Float = 0
        for (index, value) in vector.enumerated() {
            guard value.isFinite else {
                return "the embedder returned a vector that is not finite (\(value) at position \(index))"
            }
            squares += value * value
        }
        guard squares.isFinite else {
            return "the embedder returned a vector that is not finite (its norm overflows float32)"
        }
        return nil
    }
}
