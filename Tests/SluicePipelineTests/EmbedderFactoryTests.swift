import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluicePipeline

/// Embedder providers describe themselves: a provider registered from outside is a name a pipeline file
/// may use, its declared facts apply (remote: `embed.base_url` is checked; its default parallelism), and
/// the standard components build its embedder. No list of providers was edited.
@Suite struct EmbedderFactoryTests {
    @Test func aProviderRegisteredFromOutsideIsDecodedAndBuilt() throws {
        let name = "test-remote-\(UUID().uuidString.prefix(8))"
        let provider = PipelineConfiguration.Embed.Provider(name, isRemote: true, defaultParallelism: 7)
        let embedder = CountingEmbedder(dimensions: 12)
        EmbedderFactory.register(provider) { embed, _ in
            #expect(embed.baseURL == "http://127.0.0.1:9/v1")
            return embedder
        }
        let configuration = try PipelineConfiguration.load(
            file: nil,
            overrides: ["embed.provider=\(name)", "embed.base_url=http://127.0.0.1:9/v1"]
        )
        #expect(configuration.embed.provider == provider)
        #expect(configuration.embed.requestsInFlight == 7)
        let built = try PipelineComponents.makeEmbedder(configuration.embed)
        #expect(built.identity == embedder.identity)
        // Remote: its base URL is held to what every remote provider's is.
        #expect(throws: SluiceError.self) {
            try PipelineConfiguration.load(file: nil, overrides: ["embed.provider=\(name)", "embed.base_url=ftp://x"])
        }
    }

    @Test func anUnknownProviderIsStillRefusedWhileDecoding() {
        let error = #expect(throws: SluiceError.self) {
            try PipelineConfiguration.load(file: nil, overrides: ["embed.provider=nope-\(UUID().uuidString)"])
        }
        #expect(error?.message.contains("embed.provider") == true)
    }

    /// The built-in providers declare their facts where they are declared.
    @Test func theBuiltInProvidersDeclareWhetherTheyAreRemote() {
        typealias Provider = PipelineConfiguration.Embed.Provider
        #expect(
            Provider.known.filter(\.isRemote).map(\.rawValue).prefix(4) == ["openai", "azure-openai", "ollama", "tei"]
        )
        #expect(!Provider.hash.isRemote && !Provider.minilm.isRemote)
        #expect(Provider.named("azure-openai") == .azureOpenAI)
    }
}
