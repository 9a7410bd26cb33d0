/// `serve`: the HTTP service (`sluice serve`, docs/SERVE.md).
extension PipelineConfiguration {
    public struct Serve: Sendable, Hashable {
        /// The address to bind; anything but loopback requires ``apiKeyEnvironment``.
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
        public init() {}

        /// Whether ``host`` is a loopback address (the only binds allowed without a token).
        public var bindsLoopback: Bool {
            host == "localhost" || host == "::1" || host.hasPrefix("127.")
        }
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
        try s.finish()
    }
}
