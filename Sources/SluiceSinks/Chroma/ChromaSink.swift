import Foundation
import SluiceCore
import SluiceHTTP
import Synchronization

/// Chroma over its HTTP API v2.
///
/// The tenant, database and collection are created on first use; the collection with the configured
/// space (`cosine` by default) and the embedder identity in its metadata, which is checked at start-up.
/// Records are upserted by the collection's UUID, in batches within the server's `max_batch_size`
/// (asked from `/api/v2/pre-flight-checks`, since the server does not enforce it reliably) and
/// `sink.max_batch_bytes`. Each record's metadata holds the chunk's metadata plus `document_key` and
/// `ordinal`; the chunk text is the record's document.
public final class ChromaSink: VectorSink {
    /// What the Chroma store reads of `sink.*` (``SinkFactory`` maps the pipeline file's keys to it).
    public struct Settings: Sendable {
        /// Where Chroma listens when `sink.url` is not set.
        public static let defaultURL = "http://127.0.0.1:8000"

        public var url: String
        public var apiKey: String?
        public var tenant: String
        public var database: String
        public var collection: String
        /// `cosine`, `l2` or `dot` (`ip` to Chroma).
        public var metric: String
        public var batch: Int
        public var maxBatchBytes: Int
        /// Retries after the first attempt of a write (`sink.max_retries`).
        public var maxRetries: Int
        public var timeout: Duration

        /// The store at `url`, everything else at the pipeline file's defaults.
        public init(url: String, apiKey: String?) {
            var section = PipelineConfiguration.Sink()
            section.url = url
            self.init(section: section, apiKey: apiKey)
        }

        /// What a pipeline file's `sink` section says of a Chroma store (`url`, `tenant`, `database`,
        /// `collection`, `metric`, `batch`, `max_batch_bytes`, `max_retries`, `timeout_seconds`).
        /// - Parameter apiKey: the value of the variable `sink.api_key_env` names.
        public init(section sink: PipelineConfiguration.Sink, apiKey: String?) {
            url = sink.url ?? Self.defaultURL
            self.apiKey = apiKey
            tenant = sink.tenant
            database = sink.database
            collection = sink.collection
            metric = sink.metric.rawValue
            batch = sink.batch
            maxBatchBytes = sink.maxBatchBytes
            maxRetries = sink.maxRetries
            timeout = .milliseconds(Int64(sink.timeoutSeconds * 1000))
        }
    }

    let settings: Settings
    let http: StoreHTTP
    /// The collection's UUID and the server's batch limit, once known.
    let cache = Mutex<(collectionID: String?, maxBatch: Int?, base64: Bool)>((nil, nil, false))
    /// Whether the collection's vectors may be adopted: its metadata names the pipeline's embedder.
    let embedderRecord = StoreEmbedderRecord()

    public var name: String { "chroma:\(http.baseURL)/\(settings.tenant)/\(settings.database)/\(settings.collection)" }

    public init(settings: Settings) {
        self.settings = settings
        http = StoreHTTP(
            baseURL: settings.url,
            headers: settings.apiKey.map { [("x-chroma-token", $0)] } ?? [],
            maxRetries: settings.maxRetries,
            timeout: settings.timeout,
            label: "chroma"
        )
    }

    var databasePath: String {
        "/api/v2/tenants/\(StoreHTTP.segment(settings.tenant))/databases/\(StoreHTTP.segment(settings.database))"
    }

    /// Chroma's name for the metric: `cosine`, `l2` or `ip`.
    var space: String { settings.metric == "dot" ? "ip" : settings.metric }

    struct Collection: Decodable {
        var id: String
        var metadata: [String: MetadataValue]?
        var dimension: Int?
        var configuration_json: Configuration?
        struct Configuration: Decodable {
            var hnsw: HNSW?
            struct HNSW: Decodable { var space: String? }
        }
    }

    /// The collection (or the one named `name` in the same database), or nil when it does not exist.
    func lookUpCollection(named name: String? = nil) async throws -> Collection? {
        let response = try await http.send(
            "GET",
            "\(databasePath)/collections/\(StoreHTTP.segment(name ?? settings.collection))",
            accepting: [404]
        )
        guard response.status != 404 else { return nil }
        do {
            return try JSONDecoder().decode(Collection.self, from: Data(response.body))
        } catch {
            throw SluiceError(
                .sinkFailed,
                "chroma: unexpected collection answer: \(StoreHTTP.excerpt(response.bodyText))",
                cause: error
            )
        }
    }

    /// The collection's UUID (looked up once); throws when it does not exist and `create` is false.
    func collectionID() async throws -> String? {
        if let id = cache.withLock({ $0.collectionID }) { return id }
        guard let collection = try await lookUpCollection() else { return nil }
        cache.withLock { $0.collectionID = collection.id }
        return collection.id
    }

    func recordsPath(_ id: String, _ operation: String) -> String {
        "\(databasePath)/collections/\(id)/\(operation)"
    }

    /// The server's `max_batch_size` (asked once).
    func maxBatch() async throws -> Int {
        if let known = cache.withLock({ $0.maxBatch }) { return known }
        struct PreFlight: Decodable {
            var max_batch_size: Int?
            var supports_base64_encoding: Bool?
        }
        let preflight = try await http.decode(PreFlight.self, "GET", "/api/v2/pre-flight-checks")
        let limit = max(1, preflight.max_batch_size ?? settings.batch)
        cache.withLock {
            $0.maxBatch = limit
            $0.base64 = preflight.supports_base64_encoding ?? false
        }
        return limit
    }
}

/// Embeddings as Chroma accepts them: arrays of numbers, or (when the server's pre-flight check says it
/// supports them, as the chromadb client does) base64 strings of little-endian float32s, which are
/// smaller and much cheaper to parse.
enum ChromaEmbeddings: Encodable {
    case numbers([[Float]])
    case base64([String])

    init(_ vectors: [[Float]], base64: Bool) {
        guard base64 else {
            self = .numbers(vectors)
            return
        }
        self = .base64(
            vectors.map { vector in
                var bytes = [UInt8]()
                bytes.reserveCapacity(vector.count * 4)
                for value in vector {
                    let bits = value.bitPattern.littleEndian
                    bytes += [
                        UInt8(bits & 0xFF), UInt8((bits >> 8) & 0xFF), UInt8((bits >> 16) & 0xFF), UInt8(bits >> 24),
                    ]
                }
                return Data(bytes).base64EncodedString()
            }
        )
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .numbers(let vectors): try container.encode(vectors)
        case .base64(let strings): try container.encode(strings)
        }
    }
}
