/// Every ``SluiceError/Code``, with its meaning: the one registry of failure codes.
///
/// A code is what a document's failure reason, the stats and the exit code are keyed on, so each is
/// listed here once, whatever module raises it. A command stopped by an error exits as
/// ``RunExitCode/init(for:)`` maps its code: 1 for the codes marked "exit 1", 3 for ``lockHeld``, 5 for
/// ``providerRefused``, 6 for ``dependencyUnavailable`` and ``diskFull`` and for any error that says a
/// dependency is unavailable (``SluiceError/isUnavailability``: ``network``, ``timeout``, ``sinkUnavailable``
/// in it or its causes), 7 for ``massDelete``, 8 for ``promoteRefused``, 70 (a bug) for any other; a document that fails with a code
/// does not stop the run (the run exits 2).
extension SluiceError.Code {
    // MARK: Commands and runs

    /// An unusable configuration: a pipeline file, a `--set` or an option (exit 1).
    public static let configuration = SluiceError.Code("configuration")
    /// A command used wrongly: a bad option value, malformed input to `sluice embed` (exit 1).
    public static let usage = SluiceError.Code("usage")
    /// Another run holds the state lock (exit 3).
    public static let lockHeld = SluiceError.Code("lock-held")
    /// The run would delete more than `run.max_delete_fraction` of the stored vectors, so it deleted none
    /// (exit 7).
    public static let massDelete = SluiceError.Code("mass-delete")
    /// `sluice generation promote` refused to switch (the candidate is incomplete): nothing changed (exit 8).
    public static let promoteRefused = SluiceError.Code("promote-refused")
    /// The state or the sink was built by another embedder (provider, model or dimensions) (exit 1).
    public static let embedderMismatch = SluiceError.Code("embedder-mismatch")
    /// A shutdown signal stopped the work (a wait cut short, a document left for the next run).
    public static let interrupted = SluiceError.Code("interrupted")

    // MARK: The state

    /// The state could not be opened, locked or written (LMDB, the lock file, a shut-down executor).
    public static let state = SluiceError.Code("state")
    /// The state's files are truncated or damaged: every command refuses them and says how to recover
    /// (exit 1).
    public static let stateCorrupt = SluiceError.Code("state-corrupt")
    /// A file could not be read or written (an output file, a folder), with the system's reason.
    public static let io = SluiceError.Code("io")

    // MARK: Documents: reading and extracting

    /// The document could not be opened or decoded (permissions, a damaged image, a vanished file).
    public static let unreadable = SluiceError.Code("unreadable")
    /// The document has no text to index.
    public static let emptyDocument = SluiceError.Code("empty-document")
    /// A text document is not valid UTF-8 (with the byte offset in the message).
    public static let invalidEncoding = SluiceError.Code("invalid-encoding")
    /// A document taken for text holds binary data (NUL or control bytes).
    public static let binaryContent = SluiceError.Code("binary-content")
    /// No extractor reads this format (or the file is not what its name says).
    public static let unsupportedFormat = SluiceError.Code("unsupported-format")
    /// Over a size limit: a file over `extract.max_file_mb`, an HTTP response over its limit.
    public static let tooLarge = SluiceError.Code("too-large")
    /// Took longer than its limit: extraction (`extract.timeout_seconds`) or an HTTP request.
    public static let timeout = SluiceError.Code("timeout")
    /// An extractor failed on the document (poppler, tesseract, libxml2), with its reason.
    public static let extractionFailed = SluiceError.Code("extraction-failed")
    /// An encrypted document that could not be opened (no password configured, or a wrong one).
    public static let encrypted = SluiceError.Code("encrypted")
    /// A worker process died (a crash in C code) while extracting the document.
    public static let extractorCrashed = SluiceError.Code("extractor-crashed")
    /// The document's syntax is broken (JSON, CSV, XML), with the position in the message.
    public static let malformed = SluiceError.Code("malformed")
    /// Nesting deeper than the configured limit (JSON), refused before any recursion.
    public static let tooDeep = SluiceError.Code("too-deep")
    /// A compressed container inflates past the configured size or compression ratio (a zip bomb).
    public static let zipBomb = SluiceError.Code("zip-bomb")
    /// An XML part declares a DTD or entities, which could expand without bound (billion laughs).
    public static let xmlEntities = SluiceError.Code("xml-entities")
    /// The document's text passes `extract.max_text_mb` (counted as its extractor produces it: one shared
    /// string named by a thousand cells counts a thousand times), so its extraction stopped there.
    public static let textTooLarge = SluiceError.Code("text-too-large")

    // MARK: Embedding

    /// The embedder failed for the document's chunks (retries spent, a bad answer, a non-finite vector).
    public static let embeddingFailed = SluiceError.Code("embedding-failed")
    /// A provider refused to go on (quota, credentials): the run stops sending and exits 5.
    public static let providerRefused = SluiceError.Code("provider-refused")

    // MARK: Stores and the network

    /// A store write, delete or read failed for good (retries spent, or not worth retrying).
    public static let sinkFailed = SluiceError.Code("sink-failed")
    /// A store failure worth retrying: connection refused or reset, timeout, HTTP 429 or 5xx.
    public static let sinkUnavailable = SluiceError.Code("sink-unavailable")
    /// A transport failure worth retrying: connection refused or reset, DNS failure, a transfer cut short.
    public static let network = SluiceError.Code("network")
    /// A dependency (the store, the embedder) could not be reached when a command started, so it stopped
    /// before any document was taken: nothing was marked failed; retry later (exit 6).
    public static let dependencyUnavailable = SluiceError.Code("dependency-unavailable")
    /// No space left on the device holding the state or the local store: the run stops taking documents,
    /// marks none failed, and exits 6; free space, then run again.
    public static let diskFull = SluiceError.Code("disk-full")
}

extension SluiceError {
    /// True when this error, or one of its causes, says a dependency could not be reached or answered
    /// "unavailable" (connection refused or reset, DNS failure, timeout, a store's 429/5xx): the
    /// failures that waiting may cure, as opposed to a refusal or a wrong setting.
    public var isUnavailability: Bool {
        var next: (any Error)? = self
        while let error = next as? SluiceError {
            if [.network, .timeout, .sinkUnavailable, .dependencyUnavailable].contains(error.code) { return true }
            next = error.cause
        }
        return false
    }
}

extension SluiceError.Code {
    /// Failures that cannot change while a document's bytes and the settings stay the same (docs/DESIGN.md
    /// §11): such a document is not retried until one of them changes (or `run --retry-failed`).
    package static let permanent: Set<SluiceError.Code> = [
        .emptyDocument, .invalidEncoding, .binaryContent, .unsupportedFormat, .tooLarge, .encrypted, .malformed,
        .tooDeep, .zipBomb, .xmlEntities, .textTooLarge,
    ]

    /// Whether a failure with this code is permanent for the same bytes and settings (``permanent``).
    package var isPermanent: Bool { Self.permanent.contains(self) }

    /// Every code above, for checks that each has a meaning and an exit code.
    package static let registered: [SluiceError.Code] = [
        .configuration, .usage, .lockHeld, .massDelete, .promoteRefused, .embedderMismatch, .interrupted,
        .state, .stateCorrupt, .io,
        .unreadable, .emptyDocument, .invalidEncoding, .binaryContent, .unsupportedFormat, .tooLarge, .timeout,
        .extractionFailed, .encrypted, .extractorCrashed, .malformed, .tooDeep, .zipBomb, .xmlEntities,
        .textTooLarge, .embeddingFailed, .providerRefused,
        .sinkFailed, .sinkUnavailable, .network, .dependencyUnavailable, .diskFull,
    ]
}
