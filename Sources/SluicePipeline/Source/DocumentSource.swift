import Foundation
import SluiceCore

/// Where a run's documents come from: a folder (``SourceScanner``), a bucket (``S3Source``) or web URLs
/// (``WebSource``).
///
/// The pipeline asks a source four things, and nothing else about it:
/// - **list** its entries (``walk(_:)``): each with its document key, its size and a change token (a
///   folder's mtime, an object's ETag) that the scan compares with the checkpoint's record, so an unchanged
///   entry is skipped without reading a byte;
/// - **read** an entry for extraction (``materialize(_:maxBytes:)``): a folder's file as it is, a remote
///   object downloaded into a private temporary file that is deleted after extraction;
/// - **say which keys it still holds** (``completeListing()``), for `--prune`: a listing that fails or
///   stops halfway throws, so that prune never deletes on a partial view (the mass-delete guard's first
///   line);
/// - **describe itself** for `sluice check` (``check(shard:)``).
///
/// Document keys are the source's own (a path relative to the folder, an object key relative to the
/// prefix) and stay stable across runs.
package protocol DocumentSource: Sendable {
    /// What logs and messages name: the folder's path, `s3://bucket/prefix/`.
    var name: String { get }
    /// What the listing passed over (include/exclude), for the run's report and `sluice check`.
    var leftOut: LeftOutFiles { get }
    /// Whether reading an entry costs no request: a dry run reads bytes to compare them only then.
    var readsLocally: Bool { get }

    /// A copy for a second listing ahead of the run (the progress total), with a report of its own; nil when
    /// that is not cheap (a folder's is stat only; a bucket's would cost every LIST request again).
    func countingCopy() -> (any DocumentSource)?

    /// Where an entry is, for what names a document that failed to be listed (a path, an `s3://` URL).
    func location(of key: String) -> URL

    /// Checks what can be checked before any document is taken (the folder is there; the credentials
    /// are found), without a request.
    /// - Throws: ``SluiceError/Code/configuration`` when the source cannot be used as configured.
    func prepare() throws

    /// Removes what an earlier run left behind (a killed run's downloads); called by a run that holds the
    /// state lock.
    func removeLeftovers()

    /// The requests made so far (`12 LIST, 3 GET, 0 retried`), for the run's log; nil for a folder.
    var requestSummary: String? { get }

    /// The stats' `fetch` row of a remote source: each request answered, with its latency, and the bytes of
    /// the documents downloaded; nil for a folder (the default), whose reads are the extract row's.
    var fetchMeter: StageMeter? { get }

    /// Lists the source's selected entries (include/exclude, the run's shard), calling `body` for each
    /// entry or per-entry problem; `body` returns false to stop.
    /// - Throws: when the listing cannot start or breaks off (an unreadable root, a failed LIST page).
    nonisolated(nonsending) func walk(_ body: (Result<SourceFile, SourceProblem>) async -> Bool) async throws

    /// The keys the source holds now, from a listing that went to its end.
    /// - Throws: when the listing fails at any point: the caller must then delete nothing.
    func completeListing() async throws -> SourceListing

    /// The entry's bytes as a local file for the extractor (and the extract workers, which read by path).
    /// - Parameter maxBytes: `extract.max_file_mb`: a download stops there.
    /// - Throws: when the entry cannot be read (code ``SluiceError/Code/unreadable`` or, for a remote source
    ///   that cannot be reached, an unavailability).
    func materialize(_ file: SourceFile, maxBytes: Int) async throws -> MaterializedFile

    /// `sluice check`'s line for the source: it answers, the credentials work, how many entries match.
    func check(shard: Shard) async -> DependencyCheck

    /// Gives the source the checkpoint's records before it lists: a source whose change detection needs a
    /// request per entry (a web page's conditional GET) reads the validators its record keeps. The
    /// others need nothing (the default).
    func recall(_ records: @escaping @Sendable (String) -> DocumentRecord?)

    /// What the listing passed over for a reason of the source's own (a URL robots.txt disallows), for the
    /// run's notice; nil when nothing was (the default).
    var skipped: String? { get }
}

extension DocumentSource {
    package func recall(_ records: @escaping @Sendable (String) -> DocumentRecord?) {}
    package var skipped: String? { nil }
    package var fetchMeter: StageMeter? { nil }
}

/// An entry the source could not list (an unreadable folder, a dangling link, a name that is not UTF-8),
/// reported per key: the document fails with it.
package struct SourceProblem: Error, Sendable, Hashable {
    package var key: String
    package var error: SluiceError.Code
    package var message: String

    package init(key: String, error: SluiceError.Code, message: String) {
        self.key = key
        self.error = error
        self.message = message
    }
}

/// The keys a complete listing found (see ``DocumentSource/completeListing()``).
package struct SourceListing: Sendable {
    private let holds: @Sendable (String) -> Bool

    package init(_ holds: @escaping @Sendable (String) -> Bool) { self.holds = holds }

    /// Whether the source still lists `key` (prune deletes the documents it does not).
    package func lists(_ key: String) -> Bool { holds(key) }
}

/// An entry's bytes on local disk, for as long as its extraction lasts.
package struct MaterializedFile: Sendable {
    /// The local file: its ``SourceFile/url`` and identity are the file to read.
    package var file: SourceFile
    /// Metadata the source read with the bytes (an S3 object's user metadata and tags by the pipeline's
    /// rules): merged into the document's, over what the listing gave.
    package var metadata: [String: MetadataValue] = [:]
    /// The character set the source's transport declared for the bytes (the `charset=` of the HTTP
    /// `Content-Type` a web page or an S3 object came with): ``ExtractionInput/declaredCharset``.
    package var charset: String?
    /// Deletes a temporary copy (a folder's own file is left alone).
    private let cleanup: (@Sendable () -> Void)?

    package init(file: SourceFile, cleanup: (@Sendable () -> Void)? = nil) {
        self.file = file
        self.cleanup = cleanup
    }

    /// Done with the bytes: a temporary copy is deleted.
    package func discard() { cleanup?() }
}
