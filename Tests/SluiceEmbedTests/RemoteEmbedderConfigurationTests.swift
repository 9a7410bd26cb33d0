import SluiceCore
import SluiceHTTP
import Testing

@testable import SluiceEmbed

/// One home for each default: a ``RemoteEmbedderConfiguration`` built by hand has the numbers of a
/// pipeline file that leaves the `embed.*` keys out.
@Suite struct RemoteEmbedderConfigurationTests {
    @Test(arguments: PipelineConfiguration.Embed.Provider.known.filter { $0.isRemote })
    func theDefaultsAreTheEmbedSectionsDefaults(provider: PipelineConfiguration.Embed.Provider) {
        let file = PipelineConfiguration.Embed()
        let configuration = RemoteEmbedderConfiguration(
            provider: provider.rawValue,
            baseURL: "http://127.0.0.1:1",
            model: "m",
            dimensions: file.dimensions
        )
        #expect(configuration.maxConcurrency == provider.defaultParallelism)
        #expect(configuration.maxRetries == file.maxRetries)
        #expect(configuration.maxRetryAfter == .seconds(file.maxRetryAfterSeconds))
        #expect(configuration.apiVersion == file.apiVersion)
        #expect(configuration.encodingFormat == file.encodingFormat.rawValue)
        #expect(configuration.tokenizer == file.tokenizer.rawValue)
        #expect(configuration.limits.maxTokensPerInput == file.maxInputTokens)
        #expect(configuration.limits.maxTokensPerRequest == file.maxBatchTokens)
        #expect(configuration.limits.maxRequestBytes == file.maxRequestBytes)
        #expect(configuration.limits.maxBatchSize == RemoteEmbedderConfiguration.maxInputsPerRequest)
        #expect(configuration.http.timeout == .seconds(file.timeoutSeconds))
        #expect(configuration.http.connectTimeout == .seconds(file.connectTimeoutSeconds))
    }

    @Test func theRetryPolicyCarriesTheSettingsAndSharesTheBudget() {
        var configuration = RemoteEmbedderConfiguration(
            provider: "openai",
            baseURL: "http://x",
            model: "m",
            dimensions: 8
        )
        configuration.maxRetries = 2
        configuration.maxRetryAfter = .seconds(7)
        let policy = configuration.retryPolicy
        #expect(policy.maxRetries == 2)
        #expect(policy.maxRateLimitRetries == configuration.maxRateLimitRetries)
        #expect(policy.maxRetryAfter == .seconds(7))
        #expect(policy.sharesBudget)
    }
}
