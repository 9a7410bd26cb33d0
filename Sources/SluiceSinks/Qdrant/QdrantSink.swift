import Foundation
import SluiceCore
import SluiceHTTP

/// Qdrant over its REST API.
///
/// The collection is created on first use with the vector size and distance (`Cosine` by default).
/// Qdrant accepts only unsigned integers and UUIDs as point ids, so a point's id is the UUID form of the
/// vector id (``VectorID/uuidString``, deterministic) and the original id is kept in the payload
/// (`sluice_id`) with `document_key`, `ordinal`, `text` and the chunk's `metadata`. Writes are
/// `PUT /collections/{c}/points?wait=true` in batches of 64–256 points (`sink.batch`, clamped) and
/// `sink.max_batch_bytes`; deletes go by point ids, or by a `document_key` filter for a whole document.
/// The `api-key` header carries the key from `sink.api_key_env`.
public final class QdrantSink: VectorSink {
    /// What the Qdrant store reads of `sink.*` (``SinkFactory`` maps the pipeline file's keys to it).
    public struct Settings: Sendable {
        /// Where Qdrant listens when `sink.url` is not set.
        public static let defaultURL = "http://127.0.0.1:6333"

        public var url: String
        public var apiKey: String?
        public var collection: String
        /// `cosine`, `l2` or `dot`.
        public var metric: String
        /// Points per write, clamped to 64–256.
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

        /// What a pipeline file's `sink` section says of a Qdrant store (`url`, `collection`, `metric`,
        /// `batch`, `max_batch_bytes`, `max_retries`, `timeout_seconds`).
        /// - Parameter apiKey: the value of the variable `sink.api_key_env` names.
        public init(section sink: PipelineConfiguration.Sink, apiKey: String?) {
            url = sink.url ?? Self.defaultURL
            self.apiKey = apiKey
            collection = sink.collection
            metric = sink.metric.rawValue
            batch = sink.batch
            maxBatchBytes = sink.maxBatchBytes
            maxRetries = sink.maxRetries
            timeout = .milliseconds(Int64(sink.timeoutSeconds * 1000))
        }
    }

    /// Qdrant's documented sweet spot for upsert batches.
    static let batchRange = 64...256

    let settings: Settings
    let http: StoreHTTP
    /// The embedder the collection's metadata names, as ``prepare(embedder:)`` found it.
    let embedderRecord = StoreEmbedderRecord()

    public var name: String { "qdrant:\(http.baseURL)/\(settings.collection)" }

    public init(settings: Settings) {
        self.settings = settings
        http = StoreHTTP(
            baseURL: settings.url,
            headers: settings.apiKey.map { [("api-key", $0)] } ?? [],
            maxRetries: settings.maxRetries,
            timeout: settings.timeout,
            label: "qdrant"
        )
    }

    var collectionPath: String { "/collections/\(StoreHTTP.segment(settings.collection))" }

    /// Qdrant's distance name.
    var distance: String {
        switch settings.metric {
        case "l2": return "Euclid"
        case "dot": return "Dot"
        default: return "Cosine"
        }
    }

    var batchSize: Int { min(Self.batchRange.upperBound, max(Self.batchRange.lowerBound, settings.batch)) }

    struct Envelope<T: Decodable>: Decodable { var result: T }

    /// `with_payload`: `true` or a list of fields.
    enum PayloadSelector: Encodable {
        case all
        case fields([String])
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .all: try container.encode(true)
            case .fields(let names): try container.encode(names)
            }
        }
    }

    struct CollectionInfo: Decodable {
        var points_count: Int?
        var config: Config
        struct Config: Decodable {
            var params: Params
            /// The collection's metadata (absent on a Qdrant that predates it); Sluice reads its own fields only.
            var metadata: Recorded?
            struct Params: Decodable { var vectors: Vectors }
            struct Vectors: Decodable {
                var size: Int
                var distance: String
            }
            /// The embedder Sluice recorded; a field another tool wrote in another type reads as absent.
            struct Recorded: Decodable {
                var embedder: String?
                init(from decoder: any Decoder) throws {
                    let container = try decoder.container(keyedBy: Key.self)
                    embedder = try? container.decodeIfPresent(String.self, forKey: Key(StoreEmbedderRecord.field))
                }
                struct Key: CodingKey {
                    var stringValue: String
                    var intValue: Int? { nil }
                    init(_ name: String) { stringValue = name }
                    init?(stringValue: String) { self.stringValue = stringValue }
                    init?(intValue: Int) { nil }
                }
            }
        }
    }

    /// The collection, or nil when it does not exist.
    func collectionInfo() async throws -> CollectionInfo? {
        let response = try await http.send("GET", collectionPath, accepting: [404])
        guard response.status != 404 else { return nil }
        do {
            return try JSONDecoder().decode(Envelope<CollectionInfo>.self, from: Data(response.body)).result
        } catch {
            throw SluiceError(
                .sinkFailed,
                "qdrant: unexpected collection answer: \(StoreHTTP.excerpt(response.bodyText))",
                cause: error
            )
        }
    }

    /// A point as Sluice writes and reads it.
    struct Point: Codable {
        var id: String
        var vector: [Float]?
        var payload: Payload?
        var score: Float?
        /// Everything but `sluice_id` is absent when a listing asks for the id only.
        struct Payload: Codable {
            var sluice_id: String
            var document_key: String?
            var ordinal: Int?
            var text: String?
            var metadata: [String: MetadataValue]?
        }

        init(_ record: VectorRecord) {
            id = record.id.uuidString
            vector = record.vector
            payload = Payload(
                sluice_id: record.id.rawValue,
                document_key: record.documentKey,
                ordinal: record.ordinal,
                text: record.text,
                metadata: record.metadata
            )
        }

        func record() throws -> VectorRecord {
            guard let payload, let vector, let key = payload.document_key, let ordinal = payload.ordinal,
                let text = payload.text
            else {
                throw SluiceError(.sinkFailed, "qdrant: a point came back without its payload or vector")
            }
            return VectorRecord(
                id: VectorID(rawValue: payload.sluice_id),
                documentKey: key,
                ordinal: ordinal,
                text: text,
                vector: vector,
                metadata: payload.metadata ?? [:]
            )
        }
    }
}
