import Foundation
import SluiceCore

/// Builds the sink a pipeline file names (every kind but `local`, which the pipeline builds itself).
///
/// Each store's `Settings` maps the `sink` section onto itself (`init(section:…)`), so no default is
/// restated here: this only dispatches on the kind and reads the secrets and required keys.
public enum SinkFactory {
    /// - Throws: ``SluiceError/Code/configuration`` for a missing key, a secret missing from the
    ///   environment, or the kind `local`.
    public static func make(_ configuration: PipelineConfiguration, readOnly: Bool) throws -> any VectorSink {
        let sink = configuration.sink
        switch sink.kind {
        case .jsonl:
            return try JSONLSink(path: configuration.resolve(sink.path), shards: sink.shards, readOnly: readOnly)
        case .pgvector:
            return try PgvectorSink(
                settings: .init(
                    section: sink,
                    url: try required(sink.url, key: "sink.url", kind: sink.kind),
                    password: try secret(sink.passwordEnv, key: "sink.password_env", need: .ifNamed),
                    connections: configuration.run.upsertParallelism
                )
            )
        case .chroma:
            // A local Chroma or Qdrant needs no key: a variable named by sink.api_key_env that is unset or
            // empty sends none (the store answers 401/403 if it wanted one: exit 5, "check the key").
            return ChromaSink(
                settings: .init(
                    section: sink,
                    apiKey: try secret(sink.apiKeyEnv, key: "sink.api_key_env", need: .optional)
                )
            )
        case .qdrant:
            return QdrantSink(
                settings: .init(
                    section: sink,
                    apiKey: try secret(sink.apiKeyEnv, key: "sink.api_key_env", need: .optional)
                )
            )
        case .pinecone:
            return PineconeSink(
                settings: .init(
                    section: sink,
                    apiKey: try secret(sink.apiKeyEnv, key: "sink.api_key_env", need: .required)!,
                    index: try required(sink.index, key: "sink.index", kind: sink.kind)
                )
            )
        case .local:
            throw SluiceError(.configuration, "sink.kind: '\(sink.kind.rawValue)' is not supported")
        }
    }

    /// A secret from the environment variable named in the pipeline file (never from the file itself).
    static func secret(_ variable: String?, key: String, need: EnvironmentSecret.Need) throws -> String? {
        try EnvironmentSecret.value(of: variable, key: key, need: need)
    }

    static func required(_ value: String?, key: String, kind: PipelineConfiguration.Sink.Kind) throws -> String {
        guard let value, !value.isEmpty else {
            throw SluiceError(.configuration, "\(key) is required for sink.kind \(kind.rawValue)")
        }
        return value
    }
}
