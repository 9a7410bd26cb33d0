extension PipelineConfiguration.Answer {
    /// Who writes the answer (`answer.provider`): an OpenAI-compatible chat completions endpoint, and what
    /// the answerer needs to know of it: where it is by default, which model it names by default, and where
    /// its dialect differs from OpenAI's.
    ///
    /// An open set, not an enum (as ``PipelineConfiguration/Embed/Provider`` is): each provider declares its
    /// facts where it is declared (the static members below), so a provider added later, or one a library
    /// user registers with ``register(_:)`` (another OpenAI-compatible server with its own address and
    /// model), breaks no caller. Two providers are the same when their names are.
    public struct Provider: Sendable, Hashable, CustomStringConvertible {
        /// The name in the pipeline file.
        public let rawValue: String
        /// The address used when `answer.base_url` is not set; nil: `base_url` is required.
        public let defaultBaseURL: String?
        /// The model used when `answer.model` is not set; nil: none is sent (the server or deployment decides).
        public let defaultModel: String?
        /// The key goes in an `api-key` header rather than `Authorization: Bearer`.
        public let sendsKeyInAPIKeyHeader: Bool
        /// `answer.api_version` is sent as the URL's `api-version` query item.
        public let sendsAPIVersion: Bool
        /// The request asks for token usage in a last streamed event (`stream_options`), which some servers
        /// that copy the API refuse.
        public let asksForStreamUsage: Bool

        /// A provider called `name`; what is not said is OpenAI's dialect without `stream_options`.
        public init(
            _ name: String,
            defaultBaseURL: String?,
            defaultModel: String?,
            sendsKeyInAPIKeyHeader: Bool = false,
            sendsAPIVersion: Bool = false,
            asksForStreamUsage: Bool = false
        ) {
            rawValue = name
            self.defaultBaseURL = defaultBaseURL
            self.defaultModel = defaultModel
            self.sendsKeyInAPIKeyHeader = sendsKeyInAPIKeyHeader
            self.sendsAPIVersion = sendsAPIVersion
            self.asksForStreamUsage = asksForStreamUsage
        }

        public var description: String { rawValue }

        public static func == (lhs: Provider, rhs: Provider) -> Bool { lhs.rawValue == rhs.rawValue }
        public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

        /// OpenAI, and every server that copies its API (vLLM, llama.cpp's server, LM Studio, LiteLLM).
        public static let openai = Provider(
            "openai",
            defaultBaseURL: "https://api.openai.com/v1",
            defaultModel: "gpt-4o-mini",
            asksForStreamUsage: true
        )
        /// An Azure OpenAI deployment (`base_url` is the deployment URL; `api-key` header; `api-version`).
        public static let azureOpenAI = Provider(
            "azure-openai",
            defaultBaseURL: nil,
            defaultModel: nil,
            sendsKeyInAPIKeyHeader: true,
            sendsAPIVersion: true
        )
        /// Ollama's OpenAI-compatible `/v1`.
        public static let ollama = Provider(
            "ollama",
            defaultBaseURL: "http://127.0.0.1:11434/v1",
            defaultModel: "llama3.2"
        )

        private static let registry = NamedSettingRegistry([openai, azureOpenAI, ollama])

        /// The providers a pipeline file may name, in the order they were added: Sluice's own, then those
        /// registered.
        public static var known: [Provider] { registry.all }

        /// The known provider called `name`.
        public static func named(_ name: String) -> Provider? { registry.named(name) }

        /// Makes `provider` a name a pipeline file may use (replacing a provider of the same name).
        public static func register(_ provider: Provider) { registry.register(provider) }
    }
}
