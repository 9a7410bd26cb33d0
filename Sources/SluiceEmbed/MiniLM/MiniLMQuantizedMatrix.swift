import CMiniLMKernels

/// A dense layer's weights for the int8 path, quantized once at load: per output channel, symmetric, 7 bits
/// (so that AVX2's `vpmaddubsw` never saturates), packed in the blocks the C kernels read, followed by the AVX2
/// kernel's plan of which pairs of input groups it may sum in int16.
struct MiniLMQuantizedMatrix: Sendable {
    /// Output channels (rows of the weight matrix) and inputs (its columns).
    let outputs: Int
    let inputs: Int
    private let packed: [Int8]
    private let scales: [Float]
    private let scaledSums: [Float]

    /// Quantizes `weights`, `outputs` × `inputs` floats, row-major (row j: output channel j's weights).
    init(_ weights: UnsafePointer<Float>, outputs: Int, inputs: Int) {
        precondition(
            outputs % Int(SLUICE_MINILM_INT8_BLOCK) == 0 && inputs % 4 == 0,
            "the int8 kernels take outputs in blocks of 16 and inputs in groups of 4"
        )
        self.outputs = outputs
        self.inputs = inputs
        let count = Int(sluice_minilm_int8_packed_count(Int32(outputs), Int32(inputs)))
        var packed = [Int8](repeating: 0, count: count)
        var scales = [Float](repeating: 0, count: outputs)
        var scaledSums = [Float](repeating: 0, count: outputs)
        sluice_minilm_int8_pack_weights(weights, Int32(outputs), Int32(inputs), &packed, &scales, &scaledSums)
        self.packed = packed
        self.scales = scales
        self.scaledSums = scaledSums
    }

    /// The pairs of groups of 4 inputs whose int16 sums the AVX2 kernel adds before widening them, decided
    /// at packing where no activations can take such a sum out of int16 (`sluice_minilm_int8_pair_is_exact`).
    var exactPairs: Int {
        packed.withUnsafeBufferPointer {
            Int(sluice_minilm_int8_exact_pairs($0.baseAddress!, Int32(outputs), Int32(inputs)))
        }
    }

    /// `c (+)= A · Wᵀ` for `rows` rows of A quantized by ``MiniLMInt8Activations``; adds to `c` when
    /// `accumulate`, else overwrites it.
    func multiply(
        _ a: MiniLMInt8Activations,
        rows: Int,
        kernel: MiniLMInt8Kernel,
        into c: UnsafeMutablePointer<Float>,
        ldc: Int,
        accumulate: Bool
    ) {
        packed.withUnsafeBufferPointer { packed in
            scales.withUnsafeBufferPointer { scales in
                scaledSums.withUnsafeBufferPointer { scaledSums in
                    sluice_minilm_int8_multiply(
                        kernel.code,
                        a.values,
                        a.scales,
                        a.offsets,
                        Int32(rows),
                        Int32(inputs),
                        packed.baseAddress!,
                        scales.baseAddress!,
                        scaledSums.baseAddress!,
                        Int32(outputs),
                        c,
                        Int32(ldc),
                        accumulate ? 1 : 0
                    )
                }
            }
        }
    }
}
