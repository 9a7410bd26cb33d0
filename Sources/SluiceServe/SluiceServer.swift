import Foundation
import Hummingbird
import Logging
import NIOCore
import SluiceCore
import SluicePipeline
import SluiceState

/// `sluice serve`: one pipeline's index over HTTP (docs/SERVE.md; the contract is docs/openapi.json).
///
/// The embedder and the read-only store are built once and shared by every request; runs are child
/// `sluice run` processes (`runCommand`) that go on beside queries. SIGTERM/SIGINT stop intake,
/// drain requests in flight and let a running run commit and stop, as `sluice run` does.
public struct SluiceServer: Sendable {
    public let configuration: PipelineConfiguration
    let searcher: Searcher
    /// `POST /v1/ask`'s answerer; nil when the pipeline's `answer` section cannot be used (404).
    let answerer: Answerer?
    let metrics = ServeMetrics()
    let runs: RunManager
    let checkpoint: CheckpointReader
    let token: [UInt8]?
    /// The pipeline file's name (`default` for Pipelines/default.yaml): the `pipeline` label of the run metrics.
    var pipelineName: String {
        configuration.sourceFile.map { $0.deletingPathExtension().lastPathComponent } ?? "pipeline"
    }
    let logger: Logger

    /// - Parameters:
    ///   - configuration: The pipeline; `serve` holds the bind address and the limits.
    ///   - components: The shared embedder and the (read-only) store that searches use.
    ///   - runCommand: The command line of `sluice run` for this pipeline (a background run's child process).
    /// - Throws: ``SluiceError/Code/configuration`` when the bind address is not loopback and no token is
    ///   set, or the token's variable is empty.
    public init(
        configuration: PipelineConfiguration,
        components: PipelineComponents,
        runCommand: (executable: String, arguments: [String]),
        environment: [String: String] = ProcessInfo.processInfo.environment,
        logger: Logger
    ) throws {
        let serve = configuration.serve
        if let name = serve.apiKeyEnvironment {
            guard let value = environment[name], !value.isEmpty else {
                throw SluiceError(
                    .configuration,
                    "serve.api_key_env names \(name), which is not set or empty: export \(name)=<a long random token>"
                )
            }
            token = Array(value.utf8)
        } else if !serve.bindsLoopback {
            throw SluiceError(
                .configuration,
                "serve.host is \(serve.host), not loopback: set serve.api_key_env to a variable holding a bearer token (or bind 127.0.0.1)"
            )
        } else {
            token = nil
        }
        self.configuration = configuration
        var searcher = Searcher(embedder: components.embedder, sink: components.sink)
        searcher.indexEmbedder = Searcher.recordedEmbedder(configuration: configuration)
        self.searcher = searcher
        var answerer =
            !configuration.answer.isConfigured
            ? nil
            : try? Answerer(
                configuration: configuration.answer,
                embedder: components.embedder,
                sink: components.sink,
                environment: environment
            )
        answerer?.indexEmbedder = searcher.indexEmbedder
        self.answerer = answerer
        self.logger = logger
        self.checkpoint = CheckpointReader(directory: configuration.resolve(configuration.state))
        self.runs = RunManager(
            checkpoint: checkpoint,
            command: .init(executable: runCommand.executable, arguments: runCommand.arguments),
            metrics: metrics,
            logger: logger
        )
    }

    /// Serves until SIGTERM/SIGINT, then drains.
    /// - Parameter onListening: Called with the bound port once the server accepts connections.
    /// - Returns: ``RunExitCode/interrupted`` when a running run was stopped by the shutdown, else success.
    public func run(onListening: @escaping @Sendable (Int) -> Void = { _ in }) async throws -> RunExitCode {
        let serve = configuration.serve
        let app = Application(
            router: makeRouter(),
            configuration: .init(address: .hostname(serve.host, port: serve.port), serverName: "sluice"),
            services: [runs],
            onServerRunning: { channel in onListening(channel.localAddress?.port ?? serve.port) },
            logger: logger
        )
        try await app.runService()
        return runs.interruptedRun ? .interrupted : .success
    }

    func makeRouter() -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: OriginPolicyMiddleware(origins: Set(configuration.serve.corsOrigins)))
        router.add(middleware: APIMiddleware(metrics: metrics))
        if let token { router.add(middleware: BearerAuthMiddleware(token: token)) }
        let routes = APIRoutes(server: self)
        routes.add(to: router)
        return router
    }
}
