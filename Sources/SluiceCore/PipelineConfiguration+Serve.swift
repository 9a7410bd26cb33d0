extension PipelineConfiguration {
    /// `serve`: the HTTP service (`sluice serve`, docs/SERVE.md).
    public struct Serve: Sendable, Hashable {
        /// The address to bind; anything but loopback requires ``apiKeyEnvironment`` or ``keysFile``.
        public var host: String = "127.0.0.1"
        /// The TCP port.
        public var port: Int = 8080
        /// The environment variable holding the bearer token every request (but `/health`) must carry.
        public var apiKeyEnvironment: String? = nil
        /// The largest request body accepted (413 above it).
        public var maxBodyBytes: Int = 1_048_576
        /// The most results one search may ask for (400 above it).
        public var maxK: Int = 100
        /// How long one request may take before it answers 503 with `timeout`.
        public var requestTimeoutSeconds: Double = 30
        /// Origins browsers may call from (CORS); empty: no CORS headers.
        public var corsOrigins: [String] = []
        /// Names a loopback-bound server answers besides its loopback ones (a reverse proxy's public name,
        /// `name` or `name:port`); other `Host` headers answer 421 (DNS rebinding).
        public var allowedHosts: [String] = []
        /// How long a connection may sit with no request, or with a request head or body that has stopped
        /// arriving, before the server closes it.
        public var idleTimeoutSeconds: Double = 30
        /// How long SIGTERM/SIGINT waits for requests in flight before it closes their connections.
        public var drainTimeoutSeconds: Double = 20
        /// The most connections open at once (lowered to what the descriptor limit leaves room for).
        public var maxConnections: Int = 1024
        /// The API keys file (docs/ACCESS.md): each key's SHA-256, principal, groups and scopes. Relative to
        /// the pipeline file's folder; read again on SIGHUP and whenever the file changes.
        public var keysFile: String? = nil
        /// Bearer JWTs verified locally (`serve.jwt`, docs/ACCESS.md); none accepted unless
        /// ``JWT/isEnabled``.
        public var jwt = JWT()
        /// Requests per minute each key or JWT principal may make (429 with `Retry-After` above it); a key of
        /// ``keysFile`` may set its own. 0: no limit.
        public var rateLimitPerMinute: Int = 0
        /// The audit log (JSON lines, one per request that reads documents), relative to the pipeline file's
        /// folder; reopened on SIGHUP. Nil: none.
        public var auditLog: String? = nil
        /// Whether each line of the audit log holds the request's query text (a search's `query`, an ask's
        /// `question`): off by default, since the text can be as sensitive as the documents.
        public var auditQueryText = false
        public init() {}

        /// `serve.jwt`: which bearer JWTs identify a caller (docs/ACCESS.md). Verified in the process: HS256
        /// with a secret from the environment, RS256 and ES256 with the keys of a JWKS file.
        public struct JWT: Sendable, Hashable {
            /// The environment variable holding HS256's shared secret; nil: HS256 refused.
            public var hs256SecretEnvironment: String? = nil
            /// The JWKS file (RSA and P-256 public keys), relative to the pipeline file's folder; read again
            /// on SIGHUP and whenever it changes. Nil: RS256 and ES256 refused.
            public var jwksFile: String? = nil
            /// The `iss` every token must carry.
            public var issuer: String = ""
            /// The value `aud` must be or contain.
            public var audience: String = ""
            /// The clock skew allowed on `exp` and `nbf`.
            public var leewaySeconds: Double = 30
            /// The claim holding the principal (a dotted path reaches into objects).
            public var principalClaim: String = "sub"
            /// The claim holding the groups: a list of texts or one text (a dotted path: `realm_access.roles`).
            public var groupsClaim: String = "groups"
            /// The claim holding the scopes: a space-separated text or a list; nil: `scope`, else `scp`.
            public var scopesClaim: String? = nil
            public init() {}

            /// Whether JWTs are accepted: a secret's variable or a JWKS file is set.
            public var isEnabled: Bool { hs256SecretEnvironment != nil || jwksFile != nil }
        }

        /// Whether ``host`` is a loopback address (the only binds allowed without a token): an IPv4 literal
        /// in 127/8, `::1`, or the name `localhost`; parsed, so `127.example.com` is a name, not loopback.
        public var bindsLoopback: Bool { LoopbackAddress.contains(host) }
    }
}

extension PipelineConfiguration.Serve {
    /// Reads `serve.*` over the defaults.
    init(section: ConfigurationSection) throws {
        self.init()
        var s = section
        host = try s.string("host") ?? host
        port = try s.int("port", min: 0, max: 65_535) ?? port
        apiKeyEnvironment = try s.string("api_key_env") ?? apiKeyEnvironment
        maxBodyBytes = try s.int("max_body_bytes", min: 1) ?? maxBodyBytes
        maxK = try s.int("max_k", min: 1, max: 1000) ?? maxK
        requestTimeoutSeconds =
            try s.number("request_timeout_seconds", min: 0.001, max: 86_400) ?? requestTimeoutSeconds
        corsOrigins = try s.strings("cors_origins") ?? corsOrigins
        allowedHosts = try s.strings("allowed_hosts") ?? allowedHosts
        idleTimeoutSeconds = try s.number("idle_timeout_seconds", min: 0.001, max: 86_400) ?? idleTimeoutSeconds
        drainTimeoutSeconds = try s.number("drain_timeout_seconds", min: 0, max: 86_400) ?? drainTimeoutSeconds
        maxConnections = try s.int("max_connections", min: 1, max: 1_000_000) ?? maxConnections
        keysFile = try s.string("keys_file") ?? keysFile
        if let j = try s.section("jwt") { jwt = try JWT(section: j) }
        rateLimitPerMinute = try s.int("rate_limit_per_minute", min: 0, max: 1_000_000) ?? rateLimitPerMinute
        auditLog = try s.string("audit_log") ?? auditLog
        auditQueryText = try s.bool("audit_query_text") ?? auditQueryText
        try s.finish()
    }
}

extension PipelineConfiguration.Serve.JWT {
    /// Reads `serve.jwt.*` over the defaults: with `hs256_secret_env` or `jwks_file` (JWTs accepted),
    /// `issuer` and `audience` are required.
    init(section: ConfigurationSection) throws {
        self.init()
        var s = section
        hs256SecretEnvironment = try s.string("hs256_secret_env")
        jwksFile = try s.string("jwks_file")
        issuer = try s.string("issuer") ?? issuer
        audience = try s.string("audience") ?? audience
        leewaySeconds = try s.number("leeway_seconds", min: 0, max: 600) ?? leewaySeconds
        principalClaim = try s.string("principal_claim") ?? principalClaim
        groupsClaim = try s.string("groups_claim") ?? groupsClaim
        scopesClaim = try s.string("scopes_claim")
        try s.finish()
        if isEnabled && (issuer.isEmpty || audience.isEmpty) {
            throw SluiceError(
                .configuration,
                "serve.jwt: issuer and audience are required (a token of another issuer or for another service must not pass)"
            )
        }
        for (key, claim) in [("principal_claim", principalClaim), ("groups_claim", groupsClaim)]
        where claim.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty) {
            throw SluiceError(.configuration, "serve.jwt.\(key): a claim name or a dotted path (a.b), not \(claim)")
        }
    }
}
