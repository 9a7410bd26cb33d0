import Foundation
import SluiceCore

/// The shape of the model, read from a model folder's `config.json`, `sentence_bert_config.json` and
/// `1_Pooling/config.json`, and checked against what ``MiniLMEncoder`` computes: a BERT encoder with
/// absolute positions and exact GELU, mean pooling, and the dimensions of all-MiniLM-L6-v2.
struct MiniLMConfiguration: Sendable, Hashable {
    var hiddenSize = 384
    var layers = 6
    var heads = 12
    var intermediateSize = 1536
    var vocabularySize = 30522
    var maxPositions = 512
    var typeVocabularySize = 2
    var layerNormEpsilon: Float = 1e-12
    /// The window, `[CLS]` and `[SEP]` included (sentence_bert_config.json's `max_seq_length`).
    var maxSequenceLength = 256

    var headSize: Int { hiddenSize / heads }

    /// Reads and validates the configuration files of `directory`.
    /// - Throws: ``SluiceError/Code/configuration`` naming the file and the unsupported setting.
    static func load(directory: URL) throws -> MiniLMConfiguration {
        let config = try json(directory, "config.json")
        let sentence = try json(directory, "sentence_bert_config.json")
        let pooling = try json(directory, "1_Pooling/config.json")
        let expected = MiniLMConfiguration()
        var c = MiniLMConfiguration()
        func require(_ file: String, _ key: String, _ found: String?, equals value: String) throws {
            guard found == value else {
                throw SluiceError(
                    .configuration,
                    "\(directory.path)/\(file): \(key) is \(found ?? "missing"); the minilm embedder supports only \(value) (all-MiniLM-L6-v2)"
                )
            }
        }
        for key in ["model_type", "hidden_act"] {
            try require("config.json", key, config[key] as? String, equals: key == "model_type" ? "bert" : "gelu")
        }
        if config["position_embedding_type"] != nil {
            try require(
                "config.json",
                "position_embedding_type",
                config["position_embedding_type"] as? String,
                equals: "absolute"
            )
        }
        let sizes = [
            ("hidden_size", expected.hiddenSize), ("num_hidden_layers", expected.layers),
            ("num_attention_heads", expected.heads), ("intermediate_size", expected.intermediateSize),
            ("vocab_size", expected.vocabularySize), ("max_position_embeddings", expected.maxPositions),
            ("type_vocab_size", expected.typeVocabularySize),
        ]
        for (key, value) in sizes {
            try require("config.json", key, (config[key] as? Int).map { "\($0)" }, equals: "\(value)")
        }
        let modes = [
            "pooling_mode_mean_tokens", "pooling_mode_cls_token", "pooling_mode_max_tokens",
            "pooling_mode_mean_sqrt_len_tokens",
        ]
        for mode in modes where pooling[mode] != nil || mode == "pooling_mode_mean_tokens" {
            let wanted = mode == "pooling_mode_mean_tokens"
            try require("1_Pooling/config.json", mode, (pooling[mode] as? Bool).map { "\($0)" }, equals: "\(wanted)")
        }
        if let epsilon = config["layer_norm_eps"] as? Double { c.layerNormEpsilon = Float(epsilon) }
        guard let window = sentence["max_seq_length"] as? Int, window > 2, window <= c.maxPositions else {
            throw SluiceError(
                .configuration,
                "\(directory.path)/sentence_bert_config.json: max_seq_length must be a whole number from 3 to \(c.maxPositions)"
            )
        }
        c.maxSequenceLength = window
        return c
    }

    private static func json(_ directory: URL, _ name: String) throws -> [String: Any] {
        let url = directory.appendingPathComponent(name)
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw SluiceError(
                .configuration,
                "\(url.path) not found: the minilm model files are missing (run scripts/setup.sh, or set SLUICE_MODEL_DIR)"
            )
        }
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw SluiceError(.configuration, "\(url.path) is not a JSON object")
        }
        return object
    }
}
