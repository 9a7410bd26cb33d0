extension PipelineConfiguration.Source {
    /// `source.s3`: an S3-compatible bucket, read with ListObjectsV2 and GET (SigV4-signed).
    ///
    /// Credentials are never settings: the pipeline names environment variables (`access_key_env`,
    /// `secret_key_env`, `session_token_env`); without them Sluice reads `AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN`, then the shared credentials file
    /// (`AWS_SHARED_CREDENTIALS_FILE`, else `~/.aws/credentials`) under `profile` (else `AWS_PROFILE`, else
    /// `default`), as the AWS CLI does.
    public struct S3: Sendable, Hashable {
        /// The bucket (required with `source.kind: s3`).
        public var bucket: String? = nil
        /// The folder of the bucket the corpus is under (`manuals/`); document keys are object keys below it.
        /// A prefix without a trailing `/` is read as a folder (`manuals` is `manuals/`). Empty: the whole bucket.
        public var prefix: String = ""
        /// The service's base URL (`http://127.0.0.1:9000` for MinIO, R2's account URL, …); nil: AWS
        /// (`https://s3.REGION.amazonaws.com`).
        public var endpoint: String? = nil
        /// The region requests are signed for; nil: `AWS_REGION`, else `AWS_DEFAULT_REGION`, else `us-east-1`.
        public var region: String? = nil
        /// Path-style addressing (`ENDPOINT/BUCKET/KEY`) instead of virtual-host (`BUCKET.HOST/KEY`); nil:
        /// path style with an `endpoint`, virtual-host on AWS.
        public var pathStyle: Bool? = nil
        /// Environment variable holding the access key id.
        public var accessKeyEnv: String? = nil
        /// Environment variable holding the secret access key.
        public var secretKeyEnv: String? = nil
        /// Environment variable holding a session token (temporary credentials).
        public var sessionTokenEnv: String? = nil
        /// The profile of the shared credentials file; nil: `AWS_PROFILE`, else `default`.
        public var profile: String? = nil
        /// Downloads in flight at most.
        public var concurrency: Int = 4
        /// Objects per ListObjectsV2 page (S3's `max-keys`, at most 1000).
        public var listPageSize: Int = 1000
        /// Retries of a request after its first attempt, on a transient failure (a connection error, a
        /// timeout, a 5xx, `503 SlowDown`, a throttling answer); `0` tries once.
        public var maxRetries: Int = 4
        /// Limit for one request (a page of the listing, or one object's download).
        public var timeoutSeconds: Double = 300
        /// Metadata from each object's user metadata (`x-amz-meta-NAME`): record key → NAME
        /// (`{team: team}`). Read from the download's answer: no request of its own.
        public var metadataFromObject: [String: String] = [:]
        /// Metadata from each object's tags (GetObjectTagging): record key → tag (`{access: readers}`).
        /// One request per object downloaded, only when this is set; never for an unchanged object.
        public var metadataFromTags: [String: String] = [:]
        public init() {}
    }
}

extension PipelineConfiguration.Source.S3 {
    init(section: ConfigurationSection) throws {
        self.init()
        var s = section
        bucket = try s.string("bucket") ?? bucket
        prefix = try s.string("prefix") ?? prefix
        endpoint = try s.string("endpoint") ?? endpoint
        region = try s.string("region") ?? region
        pathStyle = try s.bool("path_style") ?? pathStyle
        accessKeyEnv = try s.string("access_key_env") ?? accessKeyEnv
        secretKeyEnv = try s.string("secret_key_env") ?? secretKeyEnv
        sessionTokenEnv = try s.string("session_token_env") ?? sessionTokenEnv
        profile = try s.string("profile") ?? profile
        concurrency = try s.int("concurrency", min: 1, max: 256) ?? concurrency
        listPageSize = try s.int("list_page_size", min: 1, max: 1000) ?? listPageSize
        maxRetries = try s.int("max_retries", min: 0, max: 100) ?? maxRetries
        timeoutSeconds = try s.number("timeout_seconds", min: 0.001, max: 86_400) ?? timeoutSeconds
        metadataFromObject = try s.nameMapping("metadata_from_object") ?? metadataFromObject
        metadataFromTags = try s.nameMapping("metadata_from_tags") ?? metadataFromTags
        for key in metadataFromObject.keys.sorted() + metadataFromTags.keys.sorted()
        where ["size", "mtime"].contains(key) {
            throw SluiceError(
                .configuration,
                "source.s3: metadata key \(key) is Sluice's own (a record's \(key) is set by Sluice); name it otherwise"
            )
        }
        if let endpoint, !(endpoint.hasPrefix("http://") || endpoint.hasPrefix("https://")) {
            throw SluiceError(.configuration, "source.s3.endpoint must be an http:// or https:// URL, not \(endpoint)")
        }
        if (accessKeyEnv == nil) != (secretKeyEnv == nil) {
            throw SluiceError(
                .configuration,
                "source.s3.access_key_env and source.s3.secret_key_env go together: name both variables, or neither (then the standard AWS variables and the shared credentials file are read)"
            )
        }
        try s.finish()
    }
}
