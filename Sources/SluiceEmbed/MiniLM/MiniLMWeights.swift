import SluiceCore

/// The model's parameters: the large matrices in place in the memory-mapped safetensors file, plus a
/// fused copy of each layer's query, key and value projections (one 3h×h matrix, so the three
/// projections are one matrix product; the query rows are pre-scaled by 1/√head size).
struct MiniLMWeights: @unchecked Sendable {
    // Pointers into `file` (kept alive here) and into the owned arrays; read-only after init.
    struct Layer {
        var qkvWeight: [Float]
        var qkvBias: [Float]
        var attentionOutputWeight: UnsafePointer<Float>
        var attentionOutputBias: UnsafePointer<Float>
        var attentionNormWeight: UnsafePointer<Float>
        var attentionNormBias: UnsafePointer<Float>
        var intermediateWeight: UnsafePointer<Float>
        var intermediateBias: UnsafePointer<Float>
        var outputWeight: UnsafePointer<Float>
        var outputBias: UnsafePointer<Float>
        var outputNormWeight: UnsafePointer<Float>
        var outputNormBias: UnsafePointer<Float>
    }

    let file: SafetensorsFile
    let wordEmbeddings: UnsafePointer<Float>
    let positionEmbeddings: UnsafePointer<Float>
    let tokenTypeEmbeddings: UnsafePointer<Float>
    let embeddingNormWeight: UnsafePointer<Float>
    let embeddingNormBias: UnsafePointer<Float>
    let layers: [Layer]

    /// Reads every tensor the encoder needs, checking names, types and shapes against `configuration`.
    /// - Throws: ``SluiceError/Code/configuration`` for a missing or mismatched tensor.
    init(file: SafetensorsFile, configuration c: MiniLMConfiguration) throws {
        self.file = file
        let h = c.hiddenSize
        // Checkpoints exported from BertModel may or may not carry the "bert." prefix.
        let prefix = file.tensors["embeddings.word_embeddings.weight"] == nil ? "bert." : ""
        func tensor(_ name: String, _ shape: [Int]) throws -> UnsafePointer<Float> {
            try file.floats(prefix + name, shape: shape)
        }
        wordEmbeddings = try tensor("embeddings.word_embeddings.weight", [c.vocabularySize, h])
        positionEmbeddings = try tensor("embeddings.position_embeddings.weight", [c.maxPositions, h])
        tokenTypeEmbeddings = try tensor("embeddings.token_type_embeddings.weight", [c.typeVocabularySize, h])
        embeddingNormWeight = try tensor("embeddings.LayerNorm.weight", [h])
        embeddingNormBias = try tensor("embeddings.LayerNorm.bias", [h])
        let scale = 1 / Float(c.headSize).squareRoot()
        layers = try (0..<c.layers).map { index in
            let p = "encoder.layer.\(index)."
            var qkvWeight = [Float](repeating: 0, count: 3 * h * h)
            var qkvBias = [Float](repeating: 0, count: 3 * h)
            for (part, name) in ["query", "key", "value"].enumerated() {
                let weight = try tensor(p + "attention.self.\(name).weight", [h, h])
                let bias = try tensor(p + "attention.self.\(name).bias", [h])
                let factor: Float = part == 0 ? scale : 1
                for i in 0..<(h * h) { qkvWeight[part * h * h + i] = weight[i] * factor }
                for i in 0..<h { qkvBias[part * h + i] = bias[i] * factor }
            }
            return Layer(
                qkvWeight: qkvWeight,
                qkvBias: qkvBias,
                attentionOutputWeight: try tensor(p + "attention.output.dense.weight", [h, h]),
                attentionOutputBias: try tensor(p + "attention.output.dense.bias", [h]),
                attentionNormWeight: try tensor(p + "attention.output.LayerNorm.weight", [h]),
                attentionNormBias: try tensor(p + "attention.output.LayerNorm.bias", [h]),
                intermediateWeight: try tensor(p + "intermediate.dense.weight", [c.intermediateSize, h]),
                intermediateBias: try tensor(p + "intermediate.dense.bias", [c.intermediateSize]),
                outputWeight: try tensor(p + "output.dense.weight", [h, c.intermediateSize]),
                outputBias: try tensor(p + "output.dense.bias", [h]),
                outputNormWeight: try tensor(p + "output.LayerNorm.weight", [h]),
                outputNormBias: try tensor(p + "output.LayerNorm.bias", [h])
            )
        }
    }
}
