import Foundation
import SluiceCore

/// Builds the sink a pipeline file names (every kind but `local`, which the pipeline builds itself).
public enum SinkFactory {
    /// - Throws: ``SluiceError/Code/configuration`` for a missing key, a secret missing from the
    ///   environment, or an unknown kind.
    public static func make(_ configuration: PipelineConfiguration, readOnly: Bool) throws -> any VectorSink {
        let sink = configuration.sink
        switch sink.kind {
        case "jsonl":
            return try JSONLSink(path: configuration.resolve(sink.path), shards: sink.shards, readOnly: readOnly)
        case "pgvector":
            var settings = PgvectorSink.Settings(
                url: try required(sink.url, key: "sink.url", kind: "pgvector"),
                password: try secret(sink.passwordEnv, key: "sink.password_env", need: .ifNamed), table: sink.table)
            settings.metric = sink.metric
            settings.connections = configuration.run.upsertParallelism
            settings.retries = sink.retries
            settings.maxBatchBytes = sink.maxBatchBytes
            return try PgvectorSink(settings: settings)
        case "chroma":
            var settings = ChromaSink.Settings(
                url: sink.url ?? "http://127.0.0.1:8000", apiKey: try secret(sink.apiKeyEnv, key: "sink.api_key_env", need: .ifNamed))
            settings.tenant = sink.tenant
            settings.database = sink.database
            settings.collection = sink.collection
            settings.metric = sink.metric
            settings.batch = sink.batch
            settings.maxBatchBytes = sink.maxBatchBytes
            settings.retries = sink.retries
            settings.timeout = .milliseconds(Int64(sink.timeoutSeconds * 1000))
            return ChromaSink(settings: settings)
        case "qdrant":
            var settings = QdrantSink.Settings(
                url: sink.url ?? "http://127.0.0.1:6333", apiKey: try secret(sink.apiKeyEnv, key: "sink.api_key_env", need: .ifNamed))
            settings.collection = sink.collection
            settings.metric = sink.metric
            settings.batch = min(sink.batch, 256)
            settings.maxBatchBytes = sink.maxBatchBytes
            settings.retries = sink.retries
            settings.timeout = .milliseconds(Int64(sink.timeoutSeconds * 1000))
            return QdrantSink(settings: settings)
        case "pinecone":
            var settings = PineconeSink.Settings(
                apiKey: try secret(sink.apiKeyEnv, key: "sink.api_key_env", need: .required)!,
                index: try required(sink.index, key: "sink.index", kind: "pinecone"))
            settings.controlURL = sink.url ?? settings.controlURL
            settings.namespace = sink.namespace
            settings.metric = sink.metric
            settings.batch = min(sink.batch, PineconeSink.maxRecordsPerBatch)
            settings.maxBatchBytes = min(sink.maxBatchBytes, PineconeSink.maxBytesPerBatch)
            settings.metadataTextBytes = sink.metadataTextBytes
            settings.retries = sink.retries
            settings.timeout = .milliseconds(Int64(sink.timeoutSeconds * 1000))
            return PineconeSink(settings: settings)
        default:
            throw SluiceError(.configuration, "sink.kind: '\(sink.kind)' is not supported")
        }
    }

    /// A secret from the environment variable named in the pipeline file (never from the file itself).
    static func secret(_ variable: String?, key: String, need: EnvironmentSecret.Need) throws -> String? {
        try EnvironmentSecret.value(of: variable, key: key, need: need)
    }

    static func required(_ value: String?, key: String, kind: String) throws -> String {
        guard let value, !value.isEmpty else { throw SluiceError(.configuration, "\(key) is required for sink.kind \(kind)") }
        return value
    }
}
