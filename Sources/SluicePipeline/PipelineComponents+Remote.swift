import Foundation
import SluiceCore
import SluiceEmbed
import SluiceHTTP

extension PipelineComponents {
    /// A ``RemoteEmbedder`` for `embed.provider` `openai`, `azure-openai`, `ollama` or `tei`.
    ///
    /// The API key is read from the environment variable that `embed.api_key_env` names; messages name
    /// the variable, never its value. Without `requireCredentials` a missing key is not an error (commands
    /// that only read the sink).
    /// - Throws: ``SluiceError/Code/configuration`` for a missing key, model or URL.
    public static func makeRemoteEmbedder(
        _ embed: PipelineConfiguration.Embed,
        resolve: (String) -> URL = { PipelineConfiguration.resolve($0, against: nil) },
        requireCredentials: Bool = true,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> RemoteEmbedder {
        let provider = embed.provider
        let baseURL: String
        switch (provider, embed.baseURL) {
        case (_, let url?): baseURL = url
        case (.openai, nil): baseURL = "https://api.openai.com/v1"
        case (.ollama, nil): baseURL = "http://127.0.0.1:11434"
        case (.tei, nil): baseURL = "http://127.0.0.1:8080"
        default:
            throw SluiceError(
                .configuration,
                "embed.base_url is required for provider \(provider.rawValue) (the deployment URL)"
            )
        }
        let model: String
        switch (provider, embed.model) {
        case (_, let name?): model = name
        case (.openai, nil): model = "text-embedding-3-small"
        case (.tei, nil): model = "tei"
        default: throw SluiceError(.configuration, "embed.model is required for provider \(provider.rawValue)")
        }
        var configuration = RemoteEmbedderConfiguration(
            provider: provider.rawValue,
            baseURL: baseURL,
            model: model,
            dimensions: embed.dimensions
        )
        configuration.apiKey = try EnvironmentSecret.value(
            of: embed.apiKeyEnv,
            key: "embed.api_key_env",
            need: requireCredentials ? .ifNamed : .optional,
            environment: environment
        )
        let sendDimensions =
            embed.requestDimensions
            ?? ([.openai, .azureOpenAI].contains(provider) && model.hasPrefix("text-embedding-3"))
        configuration.requestedDimensions = sendDimensions ? embed.dimensions : nil
        configuration.apiVersion = embed.apiVersion
        configuration.encodingFormat = embed.encodingFormat.rawValue
        configuration.requestsPerMinute = embed.requestsPerMinute
        configuration.tokensPerMinute = embed.tokensPerMinute
        configuration.maxConcurrency = embed.requestsInFlight
        configuration.maxRetries = embed.maxRetries
        configuration.maxRetryAfter = .milliseconds(Int64(embed.maxRetryAfterSeconds * 1000))
        configuration.tokenizer = embed.tokenizer.rawValue
        // `embed.batch` is the batcher's (EmbedStage), not a limit of the provider's requests.
        configuration.limits.maxTokensPerRequest = embed.maxBatchTokens
        configuration.limits.maxTokensPerInput = embed.maxInputTokens
        configuration.limits.maxRequestBytes = embed.maxRequestBytes
        configuration.http.timeout = .milliseconds(Int64(embed.timeoutSeconds * 1000))
        configuration.http.connectTimeout = .milliseconds(Int64(embed.connectTimeoutSeconds * 1000))
        configuration.http.caBundlePath = embed.caBundle.map { resolve($0).path }
        return try RemoteEmbedder(configuration: configuration)
    }
}
