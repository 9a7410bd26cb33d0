extension PipelineConfiguration {
    /// `generations`: where a sharded deployment on a store that cannot keep its index generations' manifest
    /// itself keeps it (docs/GENERATIONS.md, "Sharded deployments on Pinecone: a coordination store").
    public struct Generations: Sendable, Hashable {
        /// The coordination store: a PostgreSQL connection URL (`postgresql://user@host:port/db`, no password
        /// in it); nil: none (a sharded `generation start` on Pinecone is then refused).
        public var coordination: String? = nil
        /// The environment variable holding the coordination store's URL instead (it may carry a password:
        /// never printed or logged).
        public var coordinationEnv: String? = nil
        /// The environment variable holding the coordination store's PostgreSQL password.
        public var passwordEnv: String? = nil
        public init() {}

        /// Whether the pipeline file names a coordination store.
        public var hasCoordination: Bool { coordination != nil || coordinationEnv != nil }
    }
}

extension PipelineConfiguration.Generations {
    /// Reads `generations.*` over the defaults: `coordination` (string), `coordination_env` (string),
    /// `password_env` (string), each none by default.
    init(section: ConfigurationSection) throws {
        self.init()
        var s = section
        coordination = try s.string("coordination") ?? coordination
        coordinationEnv = try s.string("coordination_env") ?? coordinationEnv
        passwordEnv = try s.string("password_env") ?? passwordEnv
        try s.finish()
        if coordination != nil, coordinationEnv != nil {
            throw SluiceError(
                .configuration,
                "generations.coordination and generations.coordination_env: set one (the URL, or the variable holding it)"
            )
        }
    }
}
