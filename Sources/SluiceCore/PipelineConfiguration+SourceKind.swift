extension PipelineConfiguration.Source {
    /// Where the documents are read from (`source.kind`).
    ///
    /// An open set of names, not an enum (the shape of ``PipelineConfiguration/Sink/Kind``): a source added to
    /// Sluice is a new static member, with no break of callers that switch over it. What the pipeline needs to
    /// know about a kind (how to list it, how to read an entry, how `check` describes it) is said by the source
    /// itself where it is built (`DocumentSource` in SluicePipeline), never by lists of kinds kept here.
    public struct Kind: RawRepresentable, Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
        /// The name in the pipeline file.
        public let rawValue: String

        public init(rawValue: String) { self.rawValue = rawValue }
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public init(stringLiteral value: String) { self.rawValue = value }

        public var description: String { rawValue }

        /// A local folder (`source.path`): the default.
        public static let folder = Kind("folder")
        /// An S3-compatible bucket (AWS S3, MinIO, Ceph, R2, …): `source.s3`.
        public static let s3 = Kind("s3")
        /// Web pages and files by URL, listed directly or by sitemaps: `source.http`.
        public static let http = Kind("http")

        /// The kinds Sluice can read.
        static let known: [Kind] = [.folder, .s3, .http]
    }
}
