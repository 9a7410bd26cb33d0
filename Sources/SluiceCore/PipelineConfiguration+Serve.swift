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
        public init() {}

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
        try s.finish()
    }
}
