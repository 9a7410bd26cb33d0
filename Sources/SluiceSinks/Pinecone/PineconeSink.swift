import Foundation
import SluiceCore
import SluiceHTTP
import Synchronization

/// Pinecone over its data-plane REST API.
///
/// The index's host is discovered once from the control plane (`GET /indexes/{index}` at `sink.url`,
/// default `https://api.pinecone.io`) and cached for the life of the sink; an index that does not exist
/// is created (serverless, `aws`/`us-east-1`, the embedder's dimension and the metric) and waited for.
/// Every request carries `Api-Key` (from `sink.api_key_env`) and the pinned `X-Pinecone-Api-Version`.
///
/// Record ids are `documentKey#vectorID`, so that `list` by the prefix `documentKey#` finds a document's
/// vectors. Batches hold at most 1,000 records and 2 MB. Metadata holds `document_key`, `ordinal`, the
/// chunk's metadata and its `text`, trimmed (at a UTF-8 character boundary) so that a record's metadata
/// stays within `sink.metadata_text_bytes` (default 32,000 bytes, under Pinecone's 40 KB limit); a
/// trimmed record also gets `text_truncated: "true"` and `text_bytes` (the full length). The full text
/// stays in the source document. No metadata value is ever null. A 429 is retried with backoff,
/// honouring `Retry-After`.
public final class PineconeSink: VectorSink {
    /// What the Pinecone store reads of `sink.*` (``SinkFactory`` maps the pipeline file's keys to it).
    public struct Settings: Sendable {
        /// Pinecone's control plane, unless `sink.url` says otherwise.
        public static let defaultControlURL = "https://api.pinecone.io"

        public var controlURL: String
        public var apiKey: String
        public var index: String
        public var namespace: String
        /// `cosine`, `l2` or `dot` (`euclidean`, `dotproduct` to Pinecone).
        public var metric: String
        /// Records and bytes per write, within Pinecone's limits (1,000 records, 2 MB).
        public var batch: Int
        public var maxBatchBytes: Int
        public var metadataTextBytes: Int
        /// Retries after the first attempt of a write (`sink.max_retries`).
        public var maxRetries: Int
        public var timeout: Duration

        /// The index `index`, everything else at the pipeline file's defaults.
        public init(apiKey: String, index: String) {
            var section = PipelineConfiguration.Sink()
            section.index = index
            self.init(section: section, apiKey: apiKey, index: index)
        }

        /// What a pipeline file's `sink` section says of a Pinecone index (`url`, `namespace`, `metric`,
        /// `batch`, `max_batch_bytes`, `metadata_text_bytes`, `max_retries`, `timeout_seconds`).
        /// - Parameters:
        ///   - apiKey: the value of the variable `sink.api_key_env` names.
        ///   - index: `sink.index`, which Pinecone requires.
        public init(section sink: PipelineConfiguration.Sink, apiKey: String, index: String) {
            controlURL = sink.url ?? Self.defaultControlURL
            self.apiKey = apiKey
            self.index = index
            namespace = sink.namespace
            metric = sink.metric.rawValue
            batch = sink.batch
            maxBatchBytes = sink.maxBatchBytes
            metadataTextBytes = sink.metadataTextBytes
            maxRetries = sink.maxRetries
            timeout = .milliseconds(Int64(sink.timeoutSeconds * 1000))
        }
    }

    /// The API version every request pins.
    static let apiVersion = "2025-04"
    static let maxRecordsPerBatch = 1000
    static let maxBytesPerBatch = 2_000_000
    static let maxMetadataBytes = 40_960

    let settings: Settings
    let control: StoreHTTP
    /// The data-plane client, once the host is known; and full Pinecone ids learned from listing, for
    /// deleting vectors whose document key the caller does not know.
    let state = Mutex<(data: StoreHTTP?, listed: [VectorID: String])>((nil, [:]))
    /// The embedder the index's tag names for this namespace, as ``prepare(embedder:)`` found it.
    let embedderRecord = StoreEmbedderRecord()

    public var name: String {
        "pinecone:\(settings.index)/\(settings.namespace.isEmpty ? "(default namespace)" : settings.namespace)"
    }

    public init(settings: Settings) {
        self.settings = settings
        control = StoreHTTP(
            baseURL: settings.controlURL,
            headers: Self.headers(settings),
            maxRetries: settings.maxRetries,
            timeout: settings.timeout,
            label: "pinecone"
        )
    }

    static func headers(_ settings: Settings) -> [(String, String)] {
        [("Api-Key", settings.apiKey), ("X-Pinecone-Api-Version", apiVersion)]
    }

    /// Pinecone's metric name.
    var metricName: String {
        switch settings.metric {
        case "l2": return "euclidean"
        case "dot": return "dotproduct"
        default: return "cosine"
        }
    }

    struct IndexDescription: Decodable {
        var name: String?
        var dimension: Int?
        var metric: String?
        var host: String?
        var status: Status?
        /// The index's tags (Sluice records each namespace's embedder in one).
        var tags: [String: String]?
        struct Status: Decodable {
            var ready: Bool?
            var state: String?
        }
    }

    func describeIndex() async throws -> IndexDescription? {
        let response = try await control.send("GET", "/indexes/\(StoreHTTP.segment(settings.index))", accepting: [404])
        guard response.status != 404 else { return nil }
        do {
            return try JSONDecoder().decode(IndexDescription.self, from: Data(response.body))
        } catch {
            throw SluiceError(
                .sinkFailed,
                "pinecone: unexpected index description: \(StoreHTTP.excerpt(response.bodyText))",
                cause: error
            )
        }
    }

    /// The data-plane client for a described index (scheme of the control plane, host from Pinecone).
    func dataPlane(for description: IndexDescription) throws -> StoreHTTP {
        guard let host = description.host, !host.isEmpty else {
            throw SluiceError(.sinkFailed, "pinecone: index \(settings.index) has no host yet")
        }
        let scheme = settings.controlURL.hasPrefix("http://") ? "http://" : "https://"
        let base = host.contains("://") ? host : scheme + host
        return StoreHTTP(
            baseURL: base,
            headers: Self.headers(settings),
            maxRetries: settings.maxRetries,
            timeout: settings.timeout,
            label: "pinecone"
        )
    }

    /// The cached data plane, discovering the host on first use; nil when the index does not exist.
    func data() async throws -> StoreHTTP? {
        if let known = state.withLock({ $0.data }) { return known }
        guard let description = try await describeIndex() else { return nil }
        let data = try dataPlane(for: description)
        state.withLock { $0.data = data }
        return data
    }

    func requireData() async throws -> StoreHTTP {
        guard let data = try await data() else {
            throw SluiceError(
                .sinkFailed,
                "pinecone index \(settings.index) does not exist (it is created by the first run)"
            )
        }
        return data
    }

    /// `documentKey#vectorID`, the key shortened so that the id stays within Pinecone's 512 bytes.
    static func recordID(key: String, id: VectorID) -> String {
        var prefix = Substring(key)
        while prefix.utf8.count > 440 { prefix = prefix.dropLast() }
        return "\(prefix)#\(id.rawValue)"
    }

    /// The vector id at the end of a Pinecone id.
    static func vectorID(_ recordID: String) -> VectorID {
        VectorID(rawValue: String(recordID.split(separator: "#").last ?? Substring(recordID)))
    }
}
