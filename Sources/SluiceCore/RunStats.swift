/// The outcome and statistics of one run: per-phase figures plus document and embedding counters.
public struct RunStats: Sendable, Hashable, Codable {
    public var runID: String = ""
    public var startedAt: Double = 0
    public var wallSeconds: Double = 0
    public var phases: [PhaseStats] = []

    // Documents: every document seen ends in exactly one of these three.
    public var documentsUpserted = 0
    public var documentsSkipped = 0
    /// Of the skipped documents, those skipped as known failures (docs/DESIGN.md §11).
    /// Optional so that run records written before it read back.
    public var documentsKnownFailures: Int? = nil
    /// Files the walk passed over because source.include/exclude did not select them (nil when none).
    public var filesLeftOut: Int? = nil
    public var documentsFailed = 0
    /// Documents of the source not processed because the run was interrupted.
    public var documentsNotReached = 0
    /// Documents that vanished from the source and had their vectors deleted (prune).
    public var documentsPruned = 0

    public var chunks = 0
    public var chunksEmbedded = 0
    public var tokensEmbedded = 0
    public var embedRequests = 0
    public var embedRetries = 0
    public var rateLimited = 0
    public var cacheHits = 0
    /// Chunks whose vectors a new or lost state took from the store instead of embedding them again
    /// (docs/OPERATIONS.md, "A lost state, re-sharding"); they count as cache hits too. Nil when none,
    /// and in runs recorded before it.
    public var vectorsAdopted: Int? = nil
    public var vectorsUpserted = 0
    public var vectorsDeleted = 0
    public var bytesRead = 0
    /// Documents whose text came from another document's extraction of identical bytes in this run
    /// (optional, so that runs recorded before it still decode).
    public var extractionsShared: Int? = nil
    /// Documents whose text came from the state's extraction cache (an earlier run's extraction of
    /// identical bytes by the same extractor with the same settings); optional like `extractionsShared`.
    public var extractionsCached: Int? = nil
    /// Image captions written by the vision model in this run (`extract.images.caption`); optional like
    /// `extractionsShared`.
    public var captionsMade: Int? = nil
    /// Image captions taken from the state's extraction cache instead of being requested again.
    public var captionsCached: Int? = nil
    /// PDF pages OCR'd whose text came from OCR, in the documents this run extracted (not those whose text
    /// came from an identical file or the extraction cache); nil when none, and in runs recorded before it.
    public var ocrPages: Int? = nil
    /// PDF pages with too little text layer that were not OCR'd: no image on them could hold a scan
    /// (blank pages, vector drawings, icons; docs/EXTRACTORS.md, "Which pages are OCR'd"). Counted as
    /// ``ocrPages`` is.
    public var ocrSkippedPages: Int? = nil
    /// PDF pages OCR'd into nothing: recognition read no text (in `auto` mode, no more than the page's
    /// sparse text layer, which it keeps). Counted as ``ocrPages`` is.
    public var ocrEmptyPages: Int? = nil
    /// The most documents that were between the scanner and the checkpoint at once (bounded by buffers).
    public var maxDocumentsInFlight = 0

    public var interrupted = false
    /// Why a provider refused to go on (quota exhausted, credentials rejected): the run stopped taking
    /// work and exits with ``RunExitCode/providerRefused``. Never carries a secret.
    public var providerRefusal: String? = nil
    /// Set when a disk filled up (the state's or the local store's): the run stopped taking documents (exit 6).
    public var diskFull: String? = nil
    /// The store's own upkeep that failed during the run (the local store's keyword merges,
    /// ``SinkUpkeepFailures``): searches stayed right, but what failed is said. Nil when none, and in runs
    /// recorded before it.
    public var upkeepFailures: SinkUpkeepFailures? = nil
    /// Failure reasons by code (bounded labels).
    public var failuresByCode: [String: Int] = [:]
    /// Set when the run stopped before its end on an error (a store, the embedder or the source's listing
    /// unavailable, another run holding the lock, the mass-delete guard, a bug): the figures are those
    /// reached so far, and ``exitCode`` is the process's. Nil for a run that ended.
    public var stopped: RunStop? = nil

    public init() {}

    enum CodingKeys: String, CodingKey {
        case runID = "run_id"
        case startedAt = "started_at"
        case wallSeconds = "wall_s"
        case phases
        case documentsUpserted = "documents_upserted"
        case documentsSkipped = "documents_skipped"
        case documentsKnownFailures = "documents_known_failures"
        case filesLeftOut = "files_left_out"
        case documentsFailed = "documents_failed"
        case documentsNotReached = "documents_not_reached"
        case documentsPruned = "documents_pruned"
        case chunks
        case chunksEmbedded = "chunks_embedded"
        case tokensEmbedded = "tokens_embedded"
        case embedRequests = "embed_requests"
        case embedRetries = "embed_retries"
        case rateLimited = "rate_limited"
        case cacheHits = "cache_hits"
        case vectorsAdopted = "vectors_adopted"
        case vectorsUpserted = "vectors_upserted"
        case vectorsDeleted = "vectors_deleted"
        case bytesRead = "bytes_read"
        case interrupted
        case extractionsShared = "extractions_shared"
        case extractionsCached = "extractions_cached"
        case captionsMade = "captions_made"
        case captionsCached = "captions_cached"
        case ocrPages = "ocr_pages"
        case ocrSkippedPages = "ocr_skipped_pages"
        case ocrEmptyPages = "ocr_empty_pages"
        case maxDocumentsInFlight = "max_documents_in_flight"
        case failuresByCode = "failures_by_code"
        case providerRefusal = "provider_refusal"
        case diskFull = "disk_full"
        case upkeepFailures = "upkeep_failures"
        case stopped
    }

    /// The exit code this outcome maps to (interrupted and provider stops are decided by the runner).
    public var exitCode: RunExitCode {
        if let stopped { return RunExitCode(rawValue: stopped.exitCode) }
        if providerRefusal != nil { return .providerRefused }
        if diskFull != nil { return .dependencyUnavailable }
        if interrupted { return .interrupted }
        return documentsFailed > 0 ? .documentsFailed : .success
    }
}

/// Why a run stopped before its end (``RunStats/stopped``): its exit code and the error's message (never a
/// secret: as printed on standard error).
public struct RunStop: Sendable, Hashable, Codable {
    public var exitCode: Int32
    public var reason: String

    public init(exitCode: Int32, reason: String) {
        self.exitCode = exitCode
        self.reason = reason
    }

    /// The stop `error` makes: its exit code (``RunExitCode/init(for:)``) and its message.
    public init(_ error: any Error) {
        self.init(
            exitCode: RunExitCode(for: error).rawValue,
            reason: (error as? SluiceError)?.description ?? "\(error)"
        )
    }

    enum CodingKeys: String, CodingKey {
        case exitCode = "exit_code"
        case reason
    }
}
