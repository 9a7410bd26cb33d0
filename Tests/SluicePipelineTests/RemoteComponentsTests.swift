import Foundation
import SluiceChunk
import SluiceCore
import SluiceEmbed
import Testing

@testable import SluicePipeline

@Suite struct RemoteComponentsTests {
    static func configuration(_ yaml: String) throws -> PipelineConfiguration {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sluice-remote-\(UUID().uuidString).yaml"
        )
        try yaml.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        return try PipelineConfiguration.load(file: file)
    }

    @Test func remoteKeysAreRead() throws {
        let c = try Self.configuration(
            """
            embed:
              provider: azure-openai
              base_url: https://example.openai.azure.com/openai/deployments/emb
              model: text-embedding-3-large
              api_key_env: MY_KEY
              api_version: 2024-06-01
              rpm: 100
              tpm: 20000
              encoding_format: float
              max_retries: 3
              timeout_seconds: 5
              ca_bundle: /etc/ssl/ca.pem
            """
        )
        #expect(c.embed.provider == .azureOpenAI)
        #expect(c.embed.apiKeyEnv == "MY_KEY")
        #expect(c.embed.apiVersion == "2024-06-01")
        #expect(c.embed.requestsPerMinute == 100)
        #expect(c.embed.tokensPerMinute == 20_000)
        #expect(c.embed.encodingFormat == .float)
        #expect(c.embed.maxRetries == 3)
        #expect(c.embed.caBundle == "/etc/ssl/ca.pem")
    }

    /// `embed.batch` is the batcher's setting: it does not travel into the embedder's provider limits.
    @Test func theBatchSettingStaysWithTheBatcher() throws {
        var embed = PipelineConfiguration.Embed()
        embed.provider = .ollama
        embed.model = "m"
        embed.batch = 10
        let embedder = try PipelineComponents.makeRemoteEmbedder(embed, environment: [:])
        #expect(embedder.limits.maxBatchSize == RemoteEmbedderConfiguration.maxInputsPerRequest)
        #expect(embedder.configuration.maxRetries == embed.maxRetries)
    }

    @Test func unknownProviderAndFormatAreConfigurationErrors() {
        #expect(throws: SluiceError.self) { try Self.configuration("embed: { provider: cohere }") }
        #expect(throws: SluiceError.self) {
            try Self.configuration("embed: { provider: openai, encoding_format: int8 }")
        }
    }

    @Test func aMissingKeyNamesTheVariable() throws {
        var embed = PipelineConfiguration.Embed()
        embed.provider = .openai
        embed.apiKeyEnv = "SLUICE_TEST_UNSET_KEY"
        let error = #expect(throws: SluiceError.self) {
            try PipelineComponents.makeRemoteEmbedder(embed, environment: [:])
        }
        #expect(error?.code == .configuration)
        #expect(error?.message.contains("SLUICE_TEST_UNSET_KEY") == true)
        // Reading commands do not need it.
        let reader = try PipelineComponents.makeRemoteEmbedder(embed, requireCredentials: false, environment: [:])
        #expect(reader.configuration.apiKey == nil)
    }

    @Test func theKeyComesFromTheEnvironmentAndIsNeverPrinted() throws {
        var embed = PipelineConfiguration.Embed()
        embed.provider = .openai
        embed.apiKeyEnv = "K"
        embed.dimensions = 256
        let embedder = try PipelineComponents.makeRemoteEmbedder(embed, environment: ["K": "sk-secret-value"])
        #expect(embedder.configuration.apiKey == "sk-secret-value")
        #expect(!String(describing: embedder.configuration).contains("sk-secret-value"))
        #expect(embedder.identity.description == "openai/text-embedding-3-small@256")
        // text-embedding-3 models are asked for the configured size.
        #expect(embedder.configuration.requestedDimensions == 256)
    }

    @Test func azureNeedsItsDeploymentURL() {
        var embed = PipelineConfiguration.Embed()
        embed.provider = .azureOpenAI
        embed.model = "emb"
        #expect(throws: SluiceError.self) { try PipelineComponents.makeRemoteEmbedder(embed, environment: [:]) }
    }

    @Test func chunksAreCappedAtThePerInputLimit() throws {
        var c = PipelineConfiguration()
        c.embed.provider = .openai
        c.embed.maxInputTokens = 512
        c.chunk.maxTokens = 1_000
        c.sink.path =
            FileManager.default.temporaryDirectory.appendingPathComponent("sluice-cap-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: c.sink.path) }
        let chunker = try #require(PipelineComponents.standard(configuration: c).chunker as? RecursiveChunker)
        #expect(chunker.maxTokens == 512)
    }
}
