import CMiniLMKernels

/// The forward pass of all-MiniLM-L6-v2 for a batch of token id sequences, on the calling thread:
/// embeddings + LayerNorm, the encoder layers (self-attention, GELU feed-forward, each with a residual
/// connection and LayerNorm), mean pooling over the tokens and L2 normalisation.
///
/// Sequences are packed back to back with no padding: the dense layers run as matrix products over all
/// tokens of the batch, and attention runs per sequence over exactly its own tokens (one fused C kernel:
/// scores, softmax and context per head), which is what a padded batch with an attention mask computes,
/// without the padding's work.
///
/// With ``int8`` the four dense products of each layer run on int8 weights (quantized once at load) and
/// activations quantized per row just before each product; everything else is the same fp32 code.
struct MiniLMEncoder: Sendable {
    let configuration: MiniLMConfiguration
    let weights: MiniLMWeights
    /// The quantized dense layers, or nil for the fp32 forward pass.
    let int8: MiniLMInt8Weights?

    init(configuration: MiniLMConfiguration, weights: MiniLMWeights, int8: MiniLMInt8Weights? = nil) {
        self.configuration = configuration
        self.weights = weights
        self.int8 = int8
    }

    /// Buffers reused from one batch to the next (one per worker thread).
    final class Workspace {
        var capacity = 0
        var hidden: [Float] = []
        var qkv: [Float] = []
        var context: [Float] = []
        var intermediate: [Float] = []
        var attentionScratch: [Float] = []
        /// The int8 path's quantized activations.
        let activations = MiniLMInt8Activations()

        func reserve(tokens: Int, longest: Int, configuration c: MiniLMConfiguration) {
            if tokens > capacity {
                capacity = tokens
                hidden = [Float](repeating: 0, count: tokens * c.hiddenSize)
                qkv = [Float](repeating: 0, count: tokens * 3 * c.hiddenSize)
                context = [Float](repeating: 0, count: tokens * c.hiddenSize)
                intermediate = [Float](repeating: 0, count: tokens * c.intermediateSize)
            }
            let scratch = Int(sluice_minilm_attention_scratch_count(Int32(longest)))
            if attentionScratch.count < scratch { attentionScratch = [Float](repeating: 0, count: scratch) }
        }
    }

    /// The normalised sentence embedding of each sequence, in order.
    /// - Parameter sequences: Token ids, each `[CLS] … [SEP]` and at most the window long.
    func encode(_ sequences: [[Int32]], workspace: Workspace) -> [[Float]] {
        let c = configuration
        let h = c.hiddenSize
        let tokens = sequences.reduce(0) { $0 + $1.count }
        let longest = sequences.map(\.count).max() ?? 0
        guard tokens > 0 else { return [] }
        workspace.reserve(tokens: tokens, longest: longest, configuration: c)
        var offsets: [Int] = []
        var offset = 0
        for sequence in sequences {
            offsets.append(offset)
            offset += sequence.count
        }
        workspace.hidden.withUnsafeMutableBufferPointer { hiddenBuffer in
            let hidden = hiddenBuffer.baseAddress!
            embed(sequences, into: hidden)
            for (index, layer) in weights.layers.enumerated() {
                let quantized = int8?.layers[index]
                workspace.qkv.withUnsafeMutableBufferPointer { qkv in
                    workspace.context.withUnsafeMutableBufferPointer { context in
                        workspace.attentionScratch.withUnsafeMutableBufferPointer { scratch in
                            attention(
                                layer,
                                quantized,
                                hidden: hidden,
                                tokens: tokens,
                                sequences: sequences,
                                offsets: offsets,
                                qkv: qkv.baseAddress!,
                                context: context.baseAddress!,
                                scratch: scratch.baseAddress!,
                                activations: workspace.activations
                            )
                        }
                    }
                }
                workspace.intermediate.withUnsafeMutableBufferPointer { intermediate in
                    feedForward(
                        layer,
                        quantized,
                        hidden: hidden,
                        tokens: tokens,
                        intermediate: intermediate.baseAddress!,
                        activations: workspace.activations
                    )
                }
            }
        }
        return workspace.hidden.withUnsafeBufferPointer { hidden in
            zip(sequences, offsets).map { sequence, offset in
                Self.meanPool(hidden.baseAddress! + offset * h, rows: sequence.count, width: h)
            }
        }
    }

    /// Word + position + token-type (0) embeddings, then LayerNorm.
    private func embed(_ sequences: [[Int32]], into hidden: UnsafeMutablePointer<Float>) {
        let h = configuration.hiddenSize
        var row = hidden
        for sequence in sequences {
            for (position, id) in sequence.enumerated() {
                let word = weights.wordEmbeddings + Int(id) * h
                let place = weights.positionEmbeddings + position * h
                let type = weights.tokenTypeEmbeddings
                for index in 0..<h { row[index] = word[index] + place[index] + type[index] }
                sluice_minilm_layer_norm(
                    row,
                    nil,
                    weights.embeddingNormWeight,
                    weights.embeddingNormBias,
                    Int32(h),
                    configuration.layerNormEpsilon
                )
                row += h
            }
        }
    }

    /// `hidden = LayerNorm(hidden + SelfAttention(hidden) · Woᵀ + bo)`.
    private func attention(
        _ layer: MiniLMWeights.Layer,
        _ quantized: MiniLMInt8Weights.Layer?,
        hidden: UnsafeMutablePointer<Float>,
        tokens: Int,
        sequences: [[Int32]],
        offsets: [Int],
        qkv: UnsafeMutablePointer<Float>,
        context: UnsafeMutablePointer<Float>,
        scratch: UnsafeMutablePointer<Float>,
        activations: MiniLMInt8Activations
    ) {
        let c = configuration
        let h = c.hiddenSize
        precondition(c.headSize == Int(SLUICE_MINILM_HEAD_SIZE), "the attention kernel is built for heads of 32")
        let stride = 3 * h
        // Q, K, V of every token in one product (the query part is pre-scaled by 1/√d).
        layer.qkvBias.withUnsafeBufferPointer { bias in
            for token in 0..<tokens { (qkv + token * stride).update(from: bias.baseAddress!, count: stride) }
        }
        layer.qkvWeight.withUnsafeBufferPointer { weight in
            dense(
                hidden,
                tokens: tokens,
                inputs: h,
                weight.baseAddress!,
                quantized?.qkv,
                outputs: stride,
                into: qkv,
                accumulate: true,
                activations: activations
            )
        }
        for (sequence, offset) in zip(sequences, offsets) {
            sluice_minilm_attention(
                qkv + offset * stride,
                Int32(sequence.count),
                Int32(stride),
                Int32(c.heads),
                context + offset * h,
                Int32(h),
                scratch
            )
        }
        // hidden += context · Woᵀ, then LayerNorm(hidden + bo).
        dense(
            context,
            tokens: tokens,
            inputs: h,
            layer.attentionOutputWeight,
            quantized?.attentionOutput,
            outputs: h,
            into: hidden,
            accumulate: true,
            activations: activations
        )
        for token in 0..<tokens {
            sluice_minilm_layer_norm(
                hidden + token * h,
                layer.attentionOutputBias,
                layer.attentionNormWeight,
                layer.attentionNormBias,
                Int32(h),
                c.layerNormEpsilon
            )
        }
    }

    /// `hidden = LayerNorm(hidden + GELU(hidden · W1ᵀ + b1) · W2ᵀ + b2)`.
    private func feedForward(
        _ layer: MiniLMWeights.Layer,
        _ quantized: MiniLMInt8Weights.Layer?,
        hidden: UnsafeMutablePointer<Float>,
        tokens: Int,
        intermediate: UnsafeMutablePointer<Float>,
        activations: MiniLMInt8Activations
    ) {
        let c = configuration
        let h = c.hiddenSize
        let wide = c.intermediateSize
        dense(
            hidden,
            tokens: tokens,
            inputs: h,
            layer.intermediateWeight,
            quantized?.intermediate,
            outputs: wide,
            into: intermediate,
            accumulate: false,
            activations: activations
        )
        sluice_minilm_bias_gelu(intermediate, Int32(tokens), Int32(wide), layer.intermediateBias)
        dense(
            intermediate,
            tokens: tokens,
            inputs: wide,
            layer.outputWeight,
            quantized?.output,
            outputs: h,
            into: hidden,
            accumulate: true,
            activations: activations
        )
        for token in 0..<tokens {
            sluice_minilm_layer_norm(
                hidden + token * h,
                layer.outputBias,
                layer.outputNormWeight,
                layer.outputNormBias,
                Int32(h),
                c.layerNormEpsilon
            )
        }
    }

    /// `c (+)= a · Wᵀ` over `tokens` rows of `inputs` values into rows of `outputs` (adding to `c` when
    /// `accumulate`): the fp32 weights through BLAS, or, when the encoder is quantized, the rows quantized
    /// and multiplied by the int8 weights.
    private func dense(
        _ a: UnsafePointer<Float>,
        tokens: Int,
        inputs: Int,
        _ weight: UnsafePointer<Float>,
        _ quantized: MiniLMQuantizedMatrix?,
        outputs: Int,
        into c: UnsafeMutablePointer<Float>,
        accumulate: Bool,
        activations: MiniLMInt8Activations
    ) {
        if let quantized, let int8 {
            activations.quantize(a, count: tokens, width: inputs, stride: inputs)
            quantized.multiply(
                activations,
                rows: tokens,
                kernel: int8.kernel,
                into: c,
                ldc: outputs,
                accumulate: accumulate
            )
        } else {
            BLAS.multiplyTransposed(
                m: tokens,
                n: outputs,
                k: inputs,
                a,
                lda: inputs,
                weight,
                ldb: inputs,
                beta: accumulate ? 1 : 0,
                c,
                ldc: outputs
            )
        }
    }

    /// The mean of `rows` rows of `width` values, scaled to unit length.
    private static func meanPool(_ rows: UnsafePointer<Float>, rows count: Int, width: Int) -> [Float] {
        var sums = [Double](repeating: 0, count: width)
        for row in 0..<count {
            let values = rows + row * width
            for column in 0..<width { sums[column] += Double(values[column]) }
        }
        // The mean's scale cancels in the normalisation, but sentence-transformers clamps the norm at
        // 1e-12 of the mean, so divide first to match it exactly.
        let mean = sums.map { $0 / Double(count) }
        let norm = max(mean.reduce(0) { $0 + $1 * $1 }.squareRoot(), 1e-12)
        return mean.map { Float($0 / norm) }
    }
}
