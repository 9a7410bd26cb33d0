/// What the checkpoint knows of one document.
public struct DocumentRecord: Sendable, Hashable, Codable {
    /// Where a document stands between runs.
    public struct Status: Hashable, Sendable, Codable, CustomStringConvertible {
        public var rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }
        /// All its chunks are in the sink, matching `contentHash`.
        public static let indexed = Status("indexed")
        /// The last attempt failed (`error` says why); retried on the next run.
        public static let failed = Status("failed")

        public init(from decoder: any Decoder) throws {
            rawValue = try decoder.singleValueContainer().decode(String.self)
        }
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            try c.encode(rawValue)
        }
    }

    /// A failure reason: code and message, never a secret.
    public struct Failure: Sendable, Hashable, Codable {
        public var code: String
        public var message: String
        public init(code: String, message: String) {
            self.code = code
            self.message = message
        }
    }

    public var key: String
    public var status: Status
    /// Hash of the bytes whose chunks are in the sink (nil when nothing was ever indexed).
    public var contentHash: ContentHash?
    public var size: Int
    /// Modification time, nanoseconds since 1970 (an object's `LastModified`). For a folder's file, with the
    /// size, the change token. Records of S3 objects written before ``changeToken`` was kept hold the ETag
    /// hashed to 64 bits here instead (read as such by the source that wrote them).
    public var mtimeNanoseconds: Int64
    /// The source's change token when it has one of its own (an S3 object's ETag; a web page's validators),
    /// compared as it is with the listing's; nil for a folder's file (its mtime is the token) and in records
    /// written before 2026-11-28.
    public var changeToken: String?
    /// Vector ids the sink holds for this document.
    public var chunkIDs: [VectorID]
    /// Ids written (or being written) by an attempt that has not committed: written before the sink is
    /// touched, so that a crash between upsert and commit never leaves vectors the checkpoint forgot.
    public var pendingIDs: [VectorID]
    public var error: Failure?
    /// Hash of the bytes whose attempt failed last (nil when they could not be read): their extraction
    /// stays in the extraction cache for the retry.
    public var failedHash: ContentHash?
    /// How many vectors of the previously indexed version were deleted from the sink because the document
    /// changed and its new version failed (docs/DESIGN.md §4: none stale); nil when none were.
    public var removedVectors: Int?
    public var attempts: Int
    public var updatedAt: Double
    /// Fingerprint of the metadata from outside the bytes (pipeline values, path captures, size, mtime)
    /// that the sink's records carry; nil in records written before it was kept.
    public var metadataHash: ContentHash?
    /// Set when the last failure is permanent (docs/DESIGN.md §11): the fingerprint of the bytes' metadata
    /// and the settings it failed under. While the file and this key stay the same, runs skip the document
    /// as a known failure instead of retrying it.
    public var knownFailure: ContentHash?
    /// The name of the extractor that read the bytes last (`pdf`, `json`, `text`, …): the fingerprints above
    /// cover the settings that shape chunks which that extractor reads (``ShapingSettings/text(read:)``).
    /// nil when no extractor was chosen and in records written before 2026-11-27: every such setting.
    public var extractor: String?

    public init(
        key: String,
        status: Status,
        contentHash: ContentHash?,
        size: Int,
        mtimeNanoseconds: Int64,
        chunkIDs: [VectorID] = [],
        pendingIDs: [VectorID] = [],
        error: Failure? = nil,
        attempts: Int = 0,
        updatedAt: Double = 0,
        metadataHash: ContentHash? = nil
    ) {
        self.metadataHash = metadataHash
        self.key = key
        self.status = status
        self.contentHash = contentHash
        self.size = size
        self.mtimeNanoseconds = mtimeNanoseconds
        self.chunkIDs = chunkIDs
        self.pendingIDs = pendingIDs
        self.error = error
        self.attempts = attempts
        self.updatedAt = updatedAt
    }

    enum CodingKeys: String, CodingKey {
        case key, status
        case contentHash = "hash"
        case size
        case mtimeNanoseconds = "mtime_ns"
        case changeToken = "change_token"
        case chunkIDs = "chunks"
        case pendingIDs = "pending"
        case error
        case failedHash = "failed_hash"
        case removedVectors = "removed"
        case attempts
        case updatedAt = "updated"
        case metadataHash = "meta_hash"
        case knownFailure = "known_failure"
        case extractor
    }

    /// Every id this document may have in the sink: committed and pending.
    public var knownIDs: Set<VectorID> { Set(chunkIDs).union(pendingIDs) }
}
