/// The int8 path's weights: each layer's four dense matrices (fused Q/K/V, attention output, the two
/// feed-forward layers) quantized from the fp32 weights at load, and the kernel that multiplies them.
/// Everything else (embeddings, biases, LayerNorm, attention itself) stays fp32.
struct MiniLMInt8Weights: Sendable {
    struct Layer: Sendable {
        let qkv: MiniLMQuantizedMatrix
        let attentionOutput: MiniLMQuantizedMatrix
        let intermediate: MiniLMQuantizedMatrix
        let output: MiniLMQuantizedMatrix
    }

    let layers: [Layer]
    let kernel: MiniLMInt8Kernel

    init(_ weights: MiniLMWeights, configuration c: MiniLMConfiguration, kernel: MiniLMInt8Kernel) {
        let h = c.hiddenSize
        let wide = c.intermediateSize
        self.kernel = kernel
        layers = weights.layers.map { layer in
            Layer(
                qkv: layer.qkvWeight.withUnsafeBufferPointer {
                    MiniLMQuantizedMatrix($0.baseAddress!, outputs: 3 * h, inputs: h)
                },
                attentionOutput: MiniLMQuantizedMatrix(layer.attentionOutputWeight, outputs: h, inputs: h),
                intermediate: MiniLMQuantizedMatrix(layer.intermediateWeight, outputs: wide, inputs: h),
                output: MiniLMQuantizedMatrix(layer.outputWeight, outputs: h, inputs: wide)
            )
        }
    }
}
