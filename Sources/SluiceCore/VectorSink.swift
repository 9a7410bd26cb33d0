/// Where vectors are stored. Upserts and deletes must be idempotent.
///
/// The requirements below `removeAll()` have default implementations (in `VectorSink+Defaults.swift`),
/// so a minimal sink only writes, deletes, counts, searches and exports.
public protocol VectorSink: Sendable {
    /// A short description for logs (`local:/path`), with no secrets.
    var name: String { get }
    /// Checks (or records, when empty) the dimension and embedder identity before any work is done,
    /// creating the collection/table on first use.
    /// - Throws: ``SluiceError/Code/configuration`` or ``SluiceError/Code/embedderMismatch`` on a mismatch.
    func prepare(embedder: EmbedderIdentity) async throws
    /// Writes records; returns once they are durable (acknowledged).
    func upsert(_ records: [VectorRecord]) async throws
    /// Deletes ids; ids that do not exist are ignored.
    func delete(_ ids: [VectorID]) async throws
    /// Number of stored vectors.
    func count() async throws -> Int
    /// Top-k by the store's metric (cosine unless configured otherwise); higher scores are better.
    func search(_ vector: [Float], k: Int) async throws -> [SearchHit]
    /// Every stored record, sorted by id.
    func exportAll(_ body: @Sendable (VectorRecord) throws -> Void) async throws
    /// Deletes everything (used when re-embedding with another model).
    func removeAll() async throws

    /// Count, dimension and metric of the store as it is now (`sluice sink info`).
    func info() async throws -> SinkInfo
    /// Every stored id, or nil for a store that cannot list its ids.
    func listIDs() async throws -> Set<VectorID>?
    /// Deletes ids whose document keys are known: stores whose ids embed the key (Pinecone's
    /// `documentKey#id`, for list-by-prefix) need them; the others ignore `documentKeys`.
    func delete(_ ids: [VectorID], documentKeys: [VectorID: String]) async throws
    /// Which of `ids` the store holds.
    func existing(_ ids: [VectorID]) async throws -> Set<VectorID>
    /// The vectors the store holds for one document (its records whose document key is `key`), by id; an
    /// empty dictionary when it holds none; nil for a store that cannot read vectors back (the default).
    ///
    /// A new or lost state adopts them instead of embedding the document's unchanged chunks again: an id
    /// is derived from the document key, the chunk's ordinal and the hash of what the embedder was sent
    /// (``VectorID``), and ``prepare(embedder:)`` has checked that the store's vectors are the pipeline's
    /// embedder's, so a vector stored under a chunk's id is that chunk's. The ids of the document that are
    /// no longer its chunks are deleted after its new vectors are written, as a changed document's are.
    func storedVectors(ofDocument key: String) async throws -> [VectorID: [Float]]?
    /// Why ``storedVectors(ofDocument:)`` answers nil although the store could read vectors back (a Qdrant
    /// collection or Pinecone namespace holding vectors with no record of the embedder that made them), said
    /// once by a run that would have adopted; nil by default.
    var readBackRefusal: String? { get }
    /// What the last ``prepare(embedder:)`` could not set up as well as it meant to (pgvector's keyword search
    /// without accent folding, where the `unaccent` extension cannot be created), said once by a run in its
    /// log; nil by default.
    var preparationNotice: String? { get }
    /// What this sink's searches have skipped since it was opened because it could not be read (the local
    /// store's records whose bytes do not decode), said by `sluice search` on standard error and by the
    /// service in its log; nil by default.
    var readNotice: String? { get }
    /// Every record the store holds but cannot read (the local store's records whose bytes do not decode),
    /// found by reading each one: what `sluice verify` reports and `verify --repair` deletes. Empty by default
    /// (a store that cannot hold such a record, or fails instead of skipping it).
    func unreadableRecords() async throws -> [UnreadableRecord]
    /// Removes the collection/table/index itself (`sluice sink drop --yes`); the next run creates it again.
    func drop() async throws
    /// Called once at the end of a run that wrote to the sink (builds deferred indexes, compacts files).
    func finish() async throws

    /// The rankings ``search(_:)`` answers: `vector`, and `keyword` where the store has a keyword index.
    var searchModes: Set<SearchMode> { get }
    /// Top-k for one ranking with the filter applied by the store itself.
    /// - Throws: ``SluiceError/Code/usage`` for a filter or mode the store cannot express (never applied
    ///   after the top-k, which would return fewer than k).
    func search(_ request: SearchRequest) async throws -> [SearchHit]
    /// What the store can hold exactly in a filter (``FilterLimits``): ``Searcher`` and the store refuse
    /// a filter past it with a usage error rather than search for something else.
    var filterLimits: FilterLimits { get }

    /// Whether the store lives behind a network connection, where a collection's dimensions and metric are
    /// set when it is created: `sluice check` compares them with the pipeline's even while it is empty.
    /// True by default: a store the pipeline knows nothing about is checked as a remote one.
    var isRemote: Bool { get }
    /// The store's own upkeep that failed since the sink was opened (``SinkUpkeepFailures``); none for a
    /// store that has no upkeep of its own.
    var upkeepFailures: SinkUpkeepFailures { get }
    /// The cheap check a run makes before it takes any document (and `sluice check` before the rest).
    /// - Throws: an error for which ``SluiceError/isUnavailability`` holds when the store cannot be reached
    ///   now: the run stops with ``SluiceError/Code/dependencyUnavailable`` (exit 6) before anything is
    ///   marked failed. Other errors are left to ``prepare(embedder:)``, which reports them with its
    ///   context. The default asks a remote store for its ``info()``; a store in local files, opened when it
    ///   was built, has nothing to check.
    func checkAvailability() async throws

    /// Whether the store computes the vectors itself from the text it is given (an OpenAI vector store):
    /// the pipeline then sends each document's whole text as one record with no vector, its own embedder
    /// and chunker are not used, and a search sends the query's text (``SearchRequest/text``) instead of
    /// its embedding. False by default.
    var embedsText: Bool { get }
}

/// What `sluice sink info` prints.
public struct SinkInfo: Sendable, Hashable, Codable {
    /// The sink's ``VectorSink/name`` (no secrets).
    public var name: String
    /// Whether the collection/table exists yet.
    public var exists: Bool
    public var count: Int
    /// The vector dimension the store is set up for, when known.
    public var dimensions: Int?
    /// `cosine`, `l2` or `dot`, when known.
    public var metric: String?
    /// The embedder identity recorded in the store, when it records one.
    public var embedder: String?
    /// Store-specific facts (index type, host, batch limit), for display.
    public var details: [String: String]
    /// What works less well than it could (pgvector's keyword search without accent folding): `sluice check`
    /// reports each as a warning.
    public var warnings: [String]

    public init(
        name: String,
        exists: Bool = true,
        count: Int,
        dimensions: Int? = nil,
        metric: String? = nil,
        embedder: String? = nil,
        details: [String: String] = [:],
        warnings: [String] = []
    ) {
        self.name = name
        self.exists = exists
        self.count = count
        self.dimensions = dimensions
        self.metric = metric
        self.embedder = embedder
        self.details = details
        self.warnings = warnings
    }

    private enum CodingKeys: String, CodingKey {
        case name, exists, count, dimensions, metric, embedder, details, warnings
    }

    /// Decodes an answer from an older Sluice too, which has no `warnings`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            name: try container.decode(String.self, forKey: .name),
            exists: try container.decode(Bool.self, forKey: .exists),
            count: try container.decode(Int.self, forKey: .count),
            dimensions: try container.decodeIfPresent(Int.self, forKey: .dimensions),
            metric: try container.decodeIfPresent(String.self, forKey: .metric),
            embedder: try container.decodeIfPresent(String.self, forKey: .embedder),
            details: try container.decode([String: String].self, forKey: .details),
            warnings: try container.decodeIfPresent([String].self, forKey: .warnings) ?? []
        )
    }
}
