import Foundation

/// The element-wise work of the encoder, vectorized 16 floats at a time: LayerNorm (fused with the bias
/// of the preceding matrix product), GELU (fused with its bias), softmax. Rows of the hidden and
/// intermediate widths are multiples of 16; softmax rows of any length end with a scalar tail.
enum MiniLMKernels {
    typealias Vector = SIMD16<Float>
    static let width = 16

    @inline(__always)
    static func load(_ pointer: UnsafePointer<Float>, _ index: Int) -> Vector {
        UnsafeRawPointer(pointer + index).loadUnaligned(as: Vector.self)
    }

    @inline(__always)
    static func store(_ vector: Vector, _ pointer: UnsafeMutablePointer<Float>, _ index: Int) {
        UnsafeMutableRawPointer(pointer + index).storeBytes(of: vector, as: Vector.self)
    }

    /// `row = LayerNorm(row + bias) · gamma + beta` over `count` (a multiple of 16) values.
    @inline(__always)
    static func addBiasLayerNorm(
        _ row: UnsafeMutablePointer<Float>, bias: UnsafePointer<Float>?, gamma: UnsafePointer<Float>,
        beta: UnsafePointer<Float>, count: Int, epsilon: Float
    ) {
        var sum = Vector()
        var index = 0
        while index < count {
            var value = load(row, index)
            if let bias { value += load(bias, index) }
            store(value, row, index)
            sum += value
            index += width
        }
        let mean = sum.sum() / Float(count)
        var squares = Vector()
        index = 0
        while index < count {
            let centered = load(row, index) - mean
            squares += centered * centered
            index += width
        }
        let inverse = 1 / (squares.sum() / Float(count) + epsilon).squareRoot()
        index = 0
        while index < count {
            let normalized = (load(row, index) - mean) * inverse
            store(normalized * load(gamma, index) + load(beta, index), row, index)
            index += width
        }
    }

    /// `x = GELU(x + bias)` for each row of `columns` values (a multiple of 16), exact GELU
    /// `x/2 · (1 + erf(x/√2))` as BERT's "gelu".
    static func addBiasGELU(_ values: UnsafeMutablePointer<Float>, rows: Int, columns: Int, bias: UnsafePointer<Float>) {
        for row in 0..<rows {
            let base = values + row * columns
            var index = 0
            while index < columns {
                let x = load(base, index) + load(bias, index)
                store(0.5 * x * (1 + erf(x * 0.707_106_77)), base, index)
                index += width
            }
        }
    }

    /// Softmax of a row of `count` values, in place.
    static func softmax(_ row: UnsafeMutablePointer<Float>, count: Int) {
        let vectorEnd = count - count % width
        var maximum = -Float.infinity
        var vectorMaximum = Vector(repeating: -.infinity)
        var index = 0
        while index < vectorEnd {
            vectorMaximum = pointwiseMax(vectorMaximum, load(row, index))
            index += width
        }
        maximum = vectorMaximum.max()
        for tail in vectorEnd..<count { maximum = max(maximum, row[tail]) }
        var vectorSum = Vector()
        index = 0
        while index < vectorEnd {
            let e = exp(load(row, index) - maximum)
            store(e, row, index)
            vectorSum += e
            index += width
        }
        var total = vectorSum.sum()
        for tail in vectorEnd..<count {
            let e = Foundation.exp(row[tail] - maximum)
            row[tail] = e
            total += e
        }
        let inverse = 1 / total
        index = 0
        while index < vectorEnd {
            store(load(row, index) * inverse, row, index)
            index += width
        }
        for tail in vectorEnd..<count { row[tail] *= inverse }
    }

    /// eˣ, Cephes' single-precision polynomial after reduction by ln 2 (relative error about 1e-7).
    @inline(__always)
    static func exp(_ input: Vector) -> Vector {
        let x = input.clamped(lowerBound: Vector(repeating: -87.3), upperBound: Vector(repeating: 88.3))
        // Round x·log2(e) to the nearest integer with the 1.5·2²³ trick (no SSE4.1 rounding needed).
        let magic: Float = 12_582_912
        let n = (x * 1.442_695_04 + magic) - magic
        let r = x - n * 0.693_359_375 + n * 2.121_944_4e-4
        var p = Vector(repeating: 1.987_569_15e-4)
        p = p * r + 1.398_199_95e-3
        p = p * r + 8.333_451_9e-3
        p = p * r + 4.166_579_6e-2
        p = p * r + 1.666_666_55e-1
        p = p * r + 5.000_000_12e-1
        p = p * (r * r) + r + 1
        let exponent = (SIMD16<Int32>(n) &+ 127) &<< 23
        return p * unsafeBitCast(exponent, to: Vector.self)
    }

    /// erf(x) by Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7), odd-extended.
    @inline(__always)
    static func erf(_ x: Vector) -> Vector {
        let a = x.replacing(with: -x, where: x .< 0)
        let t = 1 / (1 + 0.327_591_1 * a)
        var p = Vector(repeating: 1.061_405_429)
        p = p * t - 1.453_152_027
        p = p * t + 1.421_413_741
        p = p * t - 0.284_496_736
        p = p * t + 0.254_829_592
        let y = 1 - p * t * Self.exp(-(a * a))
        return y.replacing(with: -y, where: x .< 0)
    }
}
