import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceEmbed

/// `embed.precision: int8`: the quantized dense layers, their kernels, and the embedder's identity.
@Suite struct MiniLMInt8Tests {
    /// Real texts and edge cases from the tokenizer fixture (a few of its 1,541).
    static func texts() throws -> [String] {
        let cases = try MiniLMFixtures.lines("wordpiece-parity.jsonl")
        let texts = try cases.map { try #require($0["text"] as? String) }
        let real = texts.filter { $0.count > 200 }
        return Array(texts.prefix(12)) + Array(real.prefix(12))
    }

    @Test func int8VectorsStayCloseToFP32() async throws {
        let texts = try Self.texts()
        let fp32 = try await MiniLMFixtures.loadEmbedder().embed(texts)
        let int8 = try await MiniLMFixtures.loadEmbedder(.int8).embed(texts)
        var worst = 1.0
        for (index, (a, b)) in zip(fp32, int8).enumerated() {
            let cosine = MiniLMFixtures.cosine(a, b)
            worst = min(worst, cosine)
            #expect(cosine >= 0.98, "text \(index) (\(texts[index].prefix(60).debugDescription)): cosine \(cosine)")
            #expect(abs(b.reduce(0) { $0 + $1 * $1 } - 1) < 1e-4)
        }
        print("minilm int8 vs fp32: worst cosine \(worst) over \(texts.count) texts")
    }

    @Test func int8KeepsTheRankingOfSimilarTexts() async throws {
        let vectors = try await MiniLMFixtures.loadEmbedder(.int8).embed([
            "How do I compress a file?", "Use gzip or xz to make a file smaller.", "The cat sat on the mat.",
        ])
        #expect(MiniLMFixtures.cosine(vectors[0], vectors[1]) > MiniLMFixtures.cosine(vectors[0], vectors[2]) + 0.2)
    }

    /// Every kernel this CPU runs (the AVX2 one included on an AVX-512 machine, forced) gives the vectors of
    /// the fastest: the integer sums are exact in all of them, only the float rounding after them differs.
    /// Kernels this CPU cannot run are not among the arguments (rather than counted as passed): the test list
    /// names the kernels that ran.
    @Test(arguments: MiniLMInt8Kernel.allCases.filter(\.isSupported))
    func everyKernelGivesTheSameVectors(kernel: MiniLMInt8Kernel) async throws {
        let long = try #require(try Self.texts().last)
        let texts = [
            "Hello, world!", "Sentence number seven about compressing files with gzip and xz.",
            String(long.prefix(300)),
        ]
        let forced = try MiniLMEmbedder(
            directory: MiniLMFixtures.modelDirectory,
            threads: 1,
            precision: .int8,
            int8Kernel: kernel
        )
        #expect(forced.int8Kernel == kernel)
        let expected = try await MiniLMFixtures.loadEmbedder(.int8).embed(texts)
        let vectors = try await forced.embed(texts)
        for (a, b) in zip(vectors, expected) {
            #expect(MiniLMFixtures.cosine(a, b) > 0.99999)
        }
    }

    /// The quantized product against the float one, on shapes with row and channel tails (rows not a multiple
    /// of any kernel's tile, 48 channels: one and a half AVX-512 tiles).
    @Test(arguments: MiniLMInt8Kernel.allCases.filter(\.isSupported))
    func theQuantizedProductApproximatesTheFloatOne(kernel: MiniLMInt8Kernel) {
        let (m, k, n) = (13, 64, 48)
        var generator = SplitMix64(seed: 7)
        let a = (0..<(m * k)).map { _ in Float(generator.unit() * 4 - 1) }
        let w = (0..<(n * k)).map { _ in Float(generator.unit() * 0.2 - 0.1) }
        let matrix = w.withUnsafeBufferPointer { MiniLMQuantizedMatrix($0.baseAddress!, outputs: n, inputs: k) }
        let activations = MiniLMInt8Activations()
        a.withUnsafeBufferPointer { activations.quantize($0.baseAddress!, count: m, width: k, stride: k) }
        var c = [Float](repeating: 1, count: m * n)
        c.withUnsafeMutableBufferPointer {
            matrix.multiply(activations, rows: m, kernel: kernel, into: $0.baseAddress!, ldc: n, accumulate: true)
        }
        var error = 0.0
        var norm = 0.0
        for i in 0..<m {
            for j in 0..<n {
                var exact = 1.0
                for x in 0..<k { exact += Double(a[i * k + x]) * Double(w[j * k + x]) }
                error += (Double(c[i * n + j]) - exact) * (Double(c[i * n + j]) - exact)
                norm += exact * exact
            }
        }
        #expect((error / norm).squareRoot() < 0.02, "relative error \((error / norm).squareRoot())")
    }

    /// The AVX2 kernel adds two groups' vpmaddubsw sums in int16 before widening them only where no uint8
    /// activations can leave int16: in channel 0, the weights of inputs 0, 1 (group 0) and 4, 5 (group 1)
    /// share an int16 lane and sum to `total` (their signs all alike); with those activations at 255 the lane
    /// holds 255 · total, within int16 at ±128 (32,640) and not at ±129 (32,895). Weights and activations are
    /// integers on scales of 1 and offsets of 0, so every kernel's result must be the exact integer sum.
    @Test(arguments: [128, 129, -128, -129])
    func pairsAreSummedInInt16OnlyWhereExact(total: Int) throws {
        let (m, k, n) = (5, 12, 16)  // one pair of groups and a last group alone; a row tail for every kernel
        let sign = total < 0 ? -1 : 1
        var w = [Int](repeating: 0, count: n * k)
        // Channel 0: 63 + (|total| − 127) + 63 + 1 in the shared lane, and other weights elsewhere.
        for (x, value) in [(0, 63), (1, abs(total) - 127), (4, 63), (5, 1)] { w[x] = sign * value }
        for (x, value) in [(2, 5), (3, -7), (7, 3), (8, -63), (9, 20), (10, 1)] { w[x] = value }
        // The other channels: small weights, and a 63 in the last group so that their scales are 1 too.
        for j in 1..<n {
            for x in 0..<k { w[j * k + x] = (j * 7 + x * 3) % 11 - 5 }
            w[j * k + 8 + j % 4] = j % 2 == 0 ? 63 : -63
        }
        let weights = w.map(Float.init)
        let matrix = weights.withUnsafeBufferPointer {
            MiniLMQuantizedMatrix($0.baseAddress!, outputs: n, inputs: k)
        }
        #expect(matrix.exactPairs == (abs(total) <= 128 ? 1 : 0))
        // Row 0: 255 everywhere but inputs 2 and 3 (the row's 0); the others random, each with a 0 and a 255.
        var generator = SplitMix64(seed: 19)
        var a = (0..<(m * k)).map { _ in Float((generator.next() >> 40) % 256) }
        for x in 0..<k { a[x] = x == 2 || x == 3 ? 0 : 255 }
        for i in 1..<m {
            a[i * k + i % k] = 0
            a[i * k + (i + 5) % k] = 255
        }
        let activations = MiniLMInt8Activations()
        a.withUnsafeBufferPointer { activations.quantize($0.baseAddress!, count: m, width: k, stride: k) }
        for kernel in MiniLMInt8Kernel.allCases where kernel.isSupported {
            var c = [Float](repeating: -1, count: m * n)
            c.withUnsafeMutableBufferPointer {
                matrix.multiply(activations, rows: m, kernel: kernel, into: $0.baseAddress!, ldc: n, accumulate: false)
            }
            for i in 0..<m {
                for j in 0..<n {
                    var exact = 0
                    for x in 0..<k { exact += Int(a[i * k + x]) * w[j * k + x] }
                    #expect(c[i * n + j] == Float(exact), "\(kernel.rawValue), total \(total), row \(i), channel \(j)")
                }
            }
        }
    }

    /// Quantized activations against the rows they came from, at widths below, at and between the 16-float
    /// vectors the range is found in (so the row's extremes also fall in a tail the vectors do not cover):
    /// the offset is the row's exact minimum, the scale its range / 255, and every value rounds to within
    /// half a step.
    @Test(arguments: [4, 8, 12, 16, 20, 36, 388])
    func activationsAreQuantizedOverTheRowsExactRange(width: Int) {
        let rows = 6
        let stride = width + 3
        var generator = SplitMix64(seed: UInt64(width))
        var a = (0..<(rows * stride)).map { _ in Float(generator.unit() * 2 - 1) }
        // Row r's extremes at places that move through the vectors and the tail.
        for r in 0..<rows {
            a[r * stride + (r * 5) % width] = -3 - Float(r)
            a[r * stride + width - 1 - (r * 3) % width] = 4 + Float(r)
        }
        let activations = MiniLMInt8Activations()
        a.withUnsafeBufferPointer { activations.quantize($0.baseAddress!, count: rows, width: width, stride: stride) }
        for r in 0..<rows {
            let row = a[(r * stride)..<(r * stride + width)]
            let (low, high) = (row.min()!, row.max()!)
            #expect(activations.offsets[r] == low, "width \(width), row \(r)")
            let scale = activations.scales[r]
            #expect(scale == (high - low) / 255, "width \(width), row \(r)")
            for (index, x) in row.enumerated() {
                let restored = Float(activations.values[r * width + index]) * scale + low
                #expect(abs(restored - x) <= scale * 0.5001, "width \(width), row \(r), value \(index)")
            }
        }
    }

    @Test func theIdentityNamesTheInt8Model() throws {
        let int8 = try MiniLMFixtures.loadEmbedder(.int8)
        let fp32 = try MiniLMFixtures.loadEmbedder()
        #expect(int8.identity.description == "minilm/all-MiniLM-L6-v2-int8@384")
        #expect(int8.identity != fp32.identity)
        #expect(int8.limits == fp32.limits)
        #expect(int8.precision == .int8)
    }

    @Test func theKernelIsChosenAtLoad() throws {
        let variable = MiniLMInt8Kernel.environmentVariable
        #expect(try MiniLMInt8Kernel.choose(nil, environment: [:]) == .best)
        #expect(try MiniLMInt8Kernel.choose(nil, environment: [variable: "portable"]) == .portable)
        #expect(try MiniLMInt8Kernel.choose(.portable, environment: [variable: "avx2"]) == .portable)
        let unknown = #expect(throws: SluiceError.self) {
            try MiniLMInt8Kernel.choose(nil, environment: [variable: "neon"])
        }
        #expect(unknown?.code == .configuration)
        #expect(unknown?.message.contains(variable) == true)
    }
}

/// Uniform doubles in [0, 1) for test data.
extension SplitMix64 {
    fileprivate mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
