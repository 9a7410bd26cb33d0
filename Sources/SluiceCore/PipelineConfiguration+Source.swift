extension PipelineConfiguration {
    /// `source`: where the documents are.
    public struct Source: Sendable, Hashable {
        /// Where the documents are read from: a folder (the default), an S3-compatible bucket or web URLs.
        public var kind: Kind = .folder
        /// Root folder of the corpus; document keys are paths relative to it.
        public var path: String = "./samples"
        public var include: [String] = ["**/*"]
        public var exclude: [String] = ["**/.git/**", "**/.sluice/**"]
        /// Follow symbolic links (never outside the root, never in loops).
        public var followSymlinks: Bool = false
        /// Metadata given to every record of every document (strings, numbers, booleans, dates, lists of strings).
        public var metadata: [String: MetadataValue] = [:]
        /// A regular expression over the document key whose named captures become metadata
        /// (`^(?<team>[^/]+)/(?<year>[0-9]{4})/`); digits-only captures become integers.
        public var metadataFromPath: String? = nil
        /// Markdown front matter (a YAML block between `---` lines at the top) becomes metadata.
        public var frontMatter: Bool = true
        /// `source.s3`: the bucket, with `kind: s3`.
        public var s3 = S3()
        /// `source.http`: the URLs and sitemaps, with `kind: http`.
        public var http = HTTP()
        public init() {}
    }
}

extension PipelineConfiguration.Source {
    /// Reads `source.kind`, `path`, `include`, `exclude`, `follow_symlinks`, …, `source.s3` and `source.http` over the defaults.
    init(section: ConfigurationSection) throws {
        self.init()
        var s = section
        kind = try s.string("kind", oneOf: Kind.known.map(\.rawValue)).map(Kind.init(rawValue:)) ?? kind
        if let section = try s.section("s3") { s3 = try S3(section: section) }
        if kind == .s3, s3.bucket?.isEmpty ?? true {
            throw SluiceError(.configuration, "source.kind is s3: source.s3.bucket is required")
        }
        if let section = try s.section("http") { http = try HTTP(section: section) }
        if kind == .http, http.urls.isEmpty, http.sitemaps.isEmpty, http.startURLs.isEmpty {
            throw SluiceError(
                .configuration,
                "source.kind is http: source.http.urls, source.http.sitemaps or source.http.start_urls is required"
            )
        }
        path = try s.path("path") ?? path
        include = try s.strings("include") ?? include
        exclude = try s.strings("exclude") ?? exclude
        followSymlinks = try s.bool("follow_symlinks") ?? followSymlinks
        metadata = try s.metadataValues("metadata") ?? metadata
        metadataFromPath = try s.string("metadata_from_path") ?? metadataFromPath
        if let pattern = metadataFromPath {
            do {
                _ = try Regex(pattern)
            } catch {
                throw SluiceError(
                    .configuration,
                    "source.metadata_from_path is not a valid regular expression: \(error)"
                )
            }
            guard pattern.contains("(?<") || pattern.contains("(?P<") else {
                throw SluiceError(
                    .configuration,
                    "source.metadata_from_path has no named captures, such as (?<team>[^/]+): nothing would be captured"
                )
            }
        }
        frontMatter = try s.bool("front_matter") ?? frontMatter
        try s.finish()
    }
}
