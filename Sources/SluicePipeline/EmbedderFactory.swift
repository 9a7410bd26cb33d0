import SluiceCore
import Synchronization

/// Embedders a library user adds: a provider (its name and what the pipeline needs to know of it,
/// ``PipelineConfiguration/Embed/Provider``) and how to build its embedder from the `embed` section. After
/// ``register(_:make:)``, a pipeline file may say `embed.provider: <its name>`, and runs and `sluice check`
/// treat it as they treat Sluice's own (``Embedder/checkReachable()`` before a run, its declared
/// parallelism when `embed.parallelism` is not set).
public enum EmbedderFactory {
    /// Builds an embedder from the `embed` section; `requireCredentials` is false for commands that only
    /// read (an API key may be absent then).
    public typealias Make =
        @Sendable (_ configuration: PipelineConfiguration.Embed, _ requireCredentials: Bool) throws ->
        any Embedder

    private static let builders = Mutex([String: Make]())

    /// Registers `provider` and its embedder, for every pipeline built after it in this process.
    public static func register(_ provider: PipelineConfiguration.Embed.Provider, make: @escaping Make) {
        PipelineConfiguration.Embed.Provider.register(provider)
        builders.withLock { $0[provider.rawValue] = make }
    }

    static func builder(for provider: PipelineConfiguration.Embed.Provider) -> Make? {
        builders.withLock { $0[provider.rawValue] }
    }
}
