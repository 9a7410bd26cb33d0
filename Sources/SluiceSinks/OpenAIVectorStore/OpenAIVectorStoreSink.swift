import Foundation
import SluiceCore
import SluiceHTTP
import Synchronization

/// An OpenAI vector store (the store behind `file_search`), over OpenAI's REST API.
///
/// OpenAI chunks and embeds for this store (``embedsText``): the pipeline sends each document's whole
/// extracted text as one record and no vector. Each record becomes a file (`POST /files`, purpose
/// `assistants`, the text as UTF-8 `.txt`, named `sluice-<store id>-…` so that a later run recognises
/// the files a killed one left behind and deletes them) attached to the vector store with the record's
/// metadata as the file's attributes (`OpenAIVectorStoreAttributes`) and, when
/// `sink.chunking_max_tokens` is set, a static chunking strategy: the files of one write by file batches
/// (`POST /vector_stores/{id}/file_batches`, each file its own attributes), a lone file by `POST
/// /vector_stores/{id}/files`. The sink then polls the batch or file until OpenAI has processed it
/// (`completed`), within `sink.processing_timeout_seconds`. A changed document is a new record: the new
/// file is attached and the old one detached and deleted. The store is `sink.vector_store_id`, or the one
/// named `sink.collection`, created by the first run.
///
/// Every request carries `Authorization: Bearer` with the key from `sink.api_key_env` (never logged);
/// 429 and 5xx are retried with backoff honouring `Retry-After` (`StoreHTTP`), 401/403 stop a run
/// with exit code 5 and an unreachable API with exit code 6.
public final class OpenAIVectorStoreSink: VectorSink {
    /// What the store reads of `sink.*` (``SinkFactory`` maps the pipeline file's keys to it).
    public struct Settings: Sendable {
        public static let defaultURL = "https://api.openai.com/v1"

        public var baseURL: String
        public var apiKey: String
        /// The vector store's name, for a store found or created by name.
        public var storeName: String
        /// An existing vector store (`vs_…`); nil: the one named ``storeName``.
        public var vectorStoreID: String?
        /// Chunk size and overlap of OpenAI's static chunking strategy; nil: `auto`.
        public var chunkingMaxTokens: Int?
        public var chunkingOverlapTokens: Int?
        /// The longest wait for one file's processing.
        public var processingTimeout: Duration
        /// Files uploaded at once.
        public var parallelism: Int
        /// Retries after the first attempt of a request (`sink.max_retries`).
        public var maxRetries: Int
        public var timeout: Duration

        /// What a pipeline file's `sink` section says of an OpenAI vector store (`url`, `collection`,
        /// `vector_store_id`, `chunking_max_tokens`, `chunking_overlap_tokens`,
        /// `processing_timeout_seconds`, `max_retries`, `timeout_seconds`).
        /// - Parameter apiKey: the value of the variable `sink.api_key_env` names.
        public init(section sink: PipelineConfiguration.Sink, apiKey: String) {
            baseURL = sink.url ?? Self.defaultURL
            self.apiKey = apiKey
            storeName = sink.collection
            vectorStoreID = sink.vectorStoreID
            chunkingMaxTokens = sink.chunkingMaxTokens
            chunkingOverlapTokens = sink.chunkingOverlapTokens
            processingTimeout = .milliseconds(Int64(sink.processingTimeoutSeconds * 1000))
            parallelism = 8
            maxRetries = sink.maxRetries
            timeout = .milliseconds(Int64(sink.timeoutSeconds * 1000))
        }
    }

    /// OpenAI's limit on one uploaded file.
    static let maxFileBytes = 512 << 20
    /// Results per search request (the API's range is 1 to 50).
    static let maxResults = 50

    let settings: Settings
    let http: StoreHTTP
    /// What the sink knows of the store between requests.
    struct State {
        /// The vector store's id once found or created.
        var storeID: String?
        /// The files the store holds by record id (nil until listed).
        var files: [VectorID: String]?
        /// The status of each file of ``files`` that is not `completed` (`in_progress`, `failed`,
        /// `cancelled`): one a killed run left unprocessed.
        var unprocessed: [String: String] = [:]
    }

    let state = Mutex(State())

    public var name: String { "openai-vector-store:\(settings.vectorStoreID ?? settings.storeName)" }
    public var embedsText: Bool { true }
    public var isRemote: Bool { true }

    public init(settings: Settings) {
        self.settings = settings
        http = StoreHTTP(
            baseURL: settings.baseURL,
            headers: [("Authorization", "Bearer \(settings.apiKey)")],
            maxRetries: settings.maxRetries,
            timeout: settings.timeout,
            label: "openai-vector-store"
        )
    }

    struct StoreObject: Decodable {
        var id: String
        var name: String?
        var status: String?
        var usageBytes: Int?
        var fileCounts: FileCounts?
        struct FileCounts: Decodable {
            var inProgress: Int?
            var completed: Int?
            var failed: Int?
            var cancelled: Int?
            var total: Int?
        }
        enum CodingKeys: String, CodingKey {
            case id, name, status
            case usageBytes = "usage_bytes"
            case fileCounts = "file_counts"
        }
    }

    struct Page<Item: Decodable>: Decodable {
        var data: [Item]
        var hasMore: Bool?
        var lastID: String?
        enum CodingKeys: String, CodingKey {
            case data
            case hasMore = "has_more"
            case lastID = "last_id"
        }
    }

    /// The vector store, looked up by id or by name; nil when it does not exist.
    func describeStore() async throws -> StoreObject? {
        if let id = settings.vectorStoreID ?? state.withLock({ $0.storeID }) {
            let response = try await http.send("GET", "/vector_stores/\(StoreHTTP.segment(id))", accepting: [404])
            guard response.status != 404 else {
                if settings.vectorStoreID != nil {
                    throw SluiceError(
                        .configuration,
                        "openai-vector-store: sink.vector_store_id \(id) does not exist (or this key cannot see it)"
                    )
                }
                state.withLock { $0 = State() }
                return nil
            }
            return try Self.decode(StoreObject.self, response)
        }
        var after: String?
        repeat {
            var path = "/vector_stores?limit=100&order=asc"
            if let after { path += "&after=\(StoreHTTP.segment(after))" }
            let page = try await http.decode(Page<StoreObject>.self, "GET", path)
            if let found = page.data.first(where: { $0.name == settings.storeName }) {
                state.withLock { $0.storeID = found.id }
                return found
            }
            after = page.hasMore == true ? page.lastID ?? page.data.last?.id : nil
        } while after != nil
        return nil
    }

    /// The vector store's id, or nil when it does not exist yet.
    func storeID() async throws -> String? {
        if let id = settings.vectorStoreID ?? state.withLock({ $0.storeID }) { return id }
        return try await describeStore()?.id
    }

    func requireStoreID() async throws -> String {
        guard let id = try await storeID() else {
            throw SluiceError(.sinkFailed, "\(name) does not exist (it is created by the first run)")
        }
        return id
    }

    static func decode<T: Decodable>(_ type: T.Type, _ response: HTTPResponse) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(response.body))
        } catch {
            throw SluiceError(
                .sinkFailed,
                "openai-vector-store: unexpected answer: \(StoreHTTP.excerpt(response.bodyText))",
                cause: error
            )
        }
    }
}
