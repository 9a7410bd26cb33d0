extension PipelineConfiguration {
    /// `generations`: where a sharded deployment on a store that cannot keep its index generations' manifest
    /// itself keeps it (docs/GENERATIONS.md, "Sharded deployments on Pinecone: a coordination store").
    public struct Generations: Sendable, Hashable {
        /// The coordination store: a PostgreSQL connection URL (`postgresql://user@host:port/db`, no password
        /// in it), or an S3 bucket and prefix (`s3://bucket/prefix`, reached and signed as ``s3`` says); nil:
        /// none (a sharded `generation start` on Pinecone is then refused).
        public var coordination: String? = nil
        /// The environment variable holding the coordination store's URL instead (it may carry a password:
        /// never printed or logged).
        public var coordinationEnv: String? = nil
        /// The environment variable holding the coordination store's PostgreSQL password.
        public var passwordEnv: String? = nil
        /// How an `s3://` coordination store is reached (`generations.s3`): `endpoint`, `region`,
        /// `path_style`, the credentials (`access_key_env`, `secret_key_env`, `session_token_env`, `profile`,
        /// found as the S3 source finds them), `max_retries` and `timeout_seconds`; the bucket and prefix are
        /// the URL's.
        public var s3 = PipelineConfiguration.Source.S3()
        public init() {}

        /// Whether the pipeline file names a coordination store.
        public var hasCoordination: Bool { coordination != nil || coordinationEnv != nil }
    }
}

extension PipelineConfiguration.Generations {
    /// Reads `generations.*` over the defaults: `coordination` (string), `coordination_env` (string),
    /// `password_env` (string), each none by default; `s3` (mapping): `endpoint`, `region`, `path_style`,
    /// `access_key_env`, `secret_key_env`, `session_token_env`, `profile`, `max_retries`, `timeout_seconds`,
    /// as `source.s3` reads them (the other keys of `source.s3` are refused here).
    init(section: ConfigurationSection) throws {
        self.init()
        var s = section
        coordination = try s.string("coordination") ?? coordination
        coordinationEnv = try s.string("coordination_env") ?? coordinationEnv
        passwordEnv = try s.string("password_env") ?? passwordEnv
        if let s3Section = try s.section("s3") { s3 = try Self.coordinationS3(s3Section) }
        try s.finish()
        if coordination != nil, coordinationEnv != nil {
            throw SluiceError(
                .configuration,
                "generations.coordination and generations.coordination_env: set one (the URL, or the variable holding it)"
            )
        }
    }
}

extension PipelineConfiguration.Generations {
    /// `generations.s3`: the keys of `source.s3` that say how a bucket is reached, read as there (the bucket
    /// and prefix are `generations.coordination`'s; any other key is refused as unknown).
    static func coordinationS3(_ section: ConfigurationSection) throws -> PipelineConfiguration.Source.S3 {
        var s = section
        var s3 = PipelineConfiguration.Source.S3()
        s3.endpoint = try s.string("endpoint") ?? s3.endpoint
        s3.region = try s.string("region") ?? s3.region
        s3.pathStyle = try s.bool("path_style") ?? s3.pathStyle
        s3.accessKeyEnv = try s.string("access_key_env") ?? s3.accessKeyEnv
        s3.secretKeyEnv = try s.string("secret_key_env") ?? s3.secretKeyEnv
        s3.sessionTokenEnv = try s.string("session_token_env") ?? s3.sessionTokenEnv
        s3.profile = try s.string("profile") ?? s3.profile
        s3.maxRetries = try s.int("max_retries", min: 0, max: 100) ?? s3.maxRetries
        s3.timeoutSeconds = try s.number("timeout_seconds", min: 0.001, max: 86_400) ?? s3.timeoutSeconds
        try s.finish()
        if let endpoint = s3.endpoint, !(endpoint.hasPrefix("http://") || endpoint.hasPrefix("https://")) {
            throw SluiceError(.configuration, "generations.s3.endpoint must be an http:// or https:// URL")
        }
        if (s3.accessKeyEnv == nil) != (s3.secretKeyEnv == nil) {
            throw SluiceError(
                .configuration,
                "generations.s3.access_key_env and generations.s3.secret_key_env go together: name both variables, or neither"
            )
        }
        return s3
    }
}
