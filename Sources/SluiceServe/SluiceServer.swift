import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle
import SluiceCore
import SluicePipeline
import SluiceState
import UnixSignals

/// `sluice serve`: one pipeline's index over HTTP (docs/SERVE.md; the contract is docs/openapi.json).
///
/// The embedder and the read-only store are built once and shared by every request; runs are child
/// `sluice run` processes (`runCommand`) that go on beside queries. SIGTERM/SIGINT stop intake,
/// drain requests in flight and let a running run commit and stop, as `sluice run` does.
public struct SluiceServer: Sendable {
    public let configuration: PipelineConfiguration
    /// The active index generation's searcher and answerer, replaced when a promote switches generations.
    let served: ServedGeneration
    /// The searcher of the active generation (taken once per request).
    var searcher: Searcher { served.searcher }
    /// `POST /v1/ask`'s answerer; nil when the pipeline has no `answer` section (404).
    var answerer: Answerer? { served.answerer }
    let metrics = ServeMetrics()
    /// What the store's searches skipped, logged once a change (``ReadNoticeLog``).
    let readNotices = ReadNoticeLog()
    let runs: RunManager
    let checkpoint: CheckpointReader
    let token: [UInt8]?
    /// The keys of `serve.keys_file`, read again when the file changes; nil without one.
    let keys: APIKeyRing?
    /// Bearer JWTs (`serve.jwt`); nil without.
    let jwt: JWTVerifier?
    /// The per-identity request budget (`serve.rate_limit_per_minute`, the keys' own limits).
    let limiter: RateLimiter
    /// The audit log (`serve.audit_log`); nil without.
    let audit: AuditLog?
    /// The port bound (the Host check compares with it).
    let listening = ListeningPort()
    /// This machine's folders as error messages name them.
    let redaction: MessageRedaction
    /// The pipeline file's name (`default` for Pipelines/default.yaml): the `pipeline` label of the run metrics.
    var pipelineName: String {
        configuration.sourceFile.map { $0.deletingPathExtension().lastPathComponent } ?? "pipeline"
    }
    let logger: Logger

    /// - Parameters:
    ///   - configuration: The pipeline; `serve` holds the bind address and the limits.
    ///   - components: The shared embedder and the (read-only) store that searches use.
    ///   - runCommand: The command line of `sluice run` for this pipeline (a background run's child process).
    ///   - reload: Loads the active index generation's configuration and components again: with it, the
    ///     server follows a promote or a rollback (docs/GENERATIONS.md) without a restart.
    /// - Throws: ``SluiceError/Code/configuration`` when the bind address is not loopback and no token is
    ///   set, or the token's variable is empty.
    public init(
        configuration: PipelineConfiguration,
        components: PipelineComponents,
        runCommand: (executable: String, arguments: [String]),
        environment: [String: String] = ProcessInfo.processInfo.environment,
        reload: (@Sendable () throws -> (PipelineConfiguration, PipelineComponents))? = nil,
        logger: Logger
    ) throws {
        let serve = configuration.serve
        keys = try serve.keysFile.map { try APIKeyRing(url: configuration.resolve($0)) }
        limiter = RateLimiter(defaultPerMinute: serve.rateLimitPerMinute)
        audit = try serve.auditLog.map { try AuditLog(url: configuration.resolve($0)) }
        jwt =
            serve.jwt.isEnabled
            ? try JWTVerifier(settings: serve.jwt, configuration: configuration, environment: environment) : nil
        if let name = serve.apiKeyEnvironment {
            guard let value = environment[name], !value.isEmpty else {
                throw SluiceError(
                    .configuration,
                    "serve.api_key_env names \(name), which is not set or empty: export \(name)=<a long random token>"
                )
            }
            token = Array(value.utf8)
        } else if !serve.bindsLoopback && keys == nil && jwt == nil {
            throw SluiceError(
                .configuration,
                "serve.host is \(serve.host), not loopback: set serve.api_key_env to a variable holding a bearer token, serve.keys_file or serve.jwt (or bind 127.0.0.1)"
            )
        } else {
            token = nil
        }
        self.configuration = configuration
        let (searcher, answerer) = try Self.searchers(configuration, components, environment: environment)
        served = ServedGeneration(
            searcher: searcher,
            answerer: answerer,
            generation: configuration.generation,
            stateDirectory: configuration.resolve(configuration.state),
            reload: reload.map { reload -> @Sendable () throws -> (Searcher, Answerer?, generation: String?) in
                {
                    let (configuration, components) = try reload()
                    let (searcher, answerer) = try Self.searchers(configuration, components, environment: environment)
                    return (searcher, answerer, configuration.generation)
                }
            }
        )
        self.logger = logger
        self.checkpoint = CheckpointReader(
            directory: configuration.resolve(configuration.state),
            activeGeneration: { [served] in served.snapshot.generation }
        )
        redaction = MessageRedaction([
            (configuration.resolve(configuration.state).path, "<state>"),
            (configuration.resolve(configuration.sink.path).path, "<store>"),
            (configuration.resolve(configuration.source.path).path, "<source>"),
        ])
        self.runs = RunManager(
            checkpoint: checkpoint,
            command: .init(executable: runCommand.executable, arguments: runCommand.arguments),
            metrics: metrics,
            logger: logger
        )
    }

    /// The searcher and the answerer of `configuration`'s index.
    static func searchers(
        _ configuration: PipelineConfiguration,
        _ components: PipelineComponents,
        environment: [String: String]
    ) throws -> (Searcher, Answerer?) {
        var searcher = Searcher(embedder: components.embedder, sink: components.sink)
        searcher.indexEmbedder = Searcher.recordedEmbedder(configuration: configuration)
        searcher.reranking = try SearchReranking(configuration: configuration, environment: environment)
        searcher.fusion = configuration.search.fusion
        // An `answer` section that cannot be used stops the start with its reason, as a broken `embed` or
        // `sink` section does: answering every ask "no answer model configured" would hide it.
        var answerer =
            !configuration.answer.isConfigured
            ? nil
            : try Answerer(
                configuration: configuration.answer,
                embedder: components.embedder,
                sink: components.sink,
                environment: environment
            )
        answerer?.indexEmbedder = searcher.indexEmbedder
        answerer?.reranking = searcher.reranking
        answerer?.fusion = searcher.fusion
        return (searcher, answerer)
    }

    /// Serves until SIGTERM/SIGINT, then drains (at most `serve.drain_timeout_seconds`) and stops a running
    /// run as `sluice run` stops on a signal.
    /// - Parameter onListening: Called with the bound port once the server accepts connections.
    /// - Returns: ``RunExitCode/interrupted`` when a running run was stopped by the shutdown, else success.
    /// - Throws: ``SluiceError/Code/configuration`` when the address cannot be bound (in use, not this
    ///   machine's, a name that does not resolve).
    public func run(onListening: @escaping @Sendable (Int) -> Void = { _ in }) async throws -> RunExitCode {
        let serve = configuration.serve
        if configuration.access.isEnabled { try await checkAccessFilter() }
        let (limit, open) = ConnectionBudget.descriptors()
        let connections = ConnectionBudget.connections(configured: serve.maxConnections, limit: limit, open: open)
        if connections < serve.maxConnections {
            logger.notice(
                "serving at most \(connections) connections at once: the descriptor limit is \(limit) (LimitNOFILE, ulimit -n)"
            )
        }
        let app = Application(
            router: makeRouter(),
            server: .http1(configuration: .init(idleTimeout: .milliseconds(Int64(serve.idleTimeoutSeconds * 1000)))),
            configuration: .init(
                address: .hostname(serve.host, port: serve.port),
                serverName: "sluice",
                availableConnectionsDelegate: MaximumAvailableConnections(connections, logger: logger)
            ),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? serve.port
                listening.set(port)
                onListening(port)
            },
            logger: logger
        )
        // SIGHUP reopens the audit log by its name (after a rotation renamed it).
        var reopenAudit: (@Sendable () -> Void)?
        if let audit {
            reopenAudit = { @Sendable [logger] in
                do {
                    try audit.reopen()
                } catch {
                    logger.error("serve.audit_log cannot be reopened, the old file stays in use: \(error)")
                }
            }
        }
        // The HTTP server stops first (its drain bounded), then the run manager stops a running run.
        let group = ServiceGroup(
            configuration: .init(
                services: [
                    .init(service: runs),
                    .init(
                        service: GenerationWatch(
                            served: served,
                            logger: logger,
                            follow: { [configuration] in
                                try await IndexGenerations(configuration: configuration).followDeployment()
                            },
                            followEvery: Self.generationFollowEvery(configuration)
                        )
                    ),
                    .init(
                        service: KeyFilesWatch(
                            files: [keys as (any RefreshableFile)?, jwt?.keys].compactMap { $0 },
                            onHangup: reopenAudit,
                            logger: logger
                        )
                    ),
                    .init(
                        service: DrainDeadlineService(
                            wrapped: app,
                            deadline: .milliseconds(Int64(serve.drainTimeoutSeconds * 1000)),
                            logger: logger
                        )
                    ),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
        )
        do {
            try await group.run()
        } catch  where listening.port == 0 {
            throw BindFailure.error(error, host: serve.host, port: serve.port)
        }
        return runs.interruptedRun ? .interrupted : .success
    }

    /// How many of ``GenerationWatch``'s once-a-second looks go by between two follows of the store's
    /// generation records: 4 on Pinecone without a coordination store, where the follow is a fetch billed in
    /// read units (a reader's state there follows a change within about 4 s, inside the grace a drop waits
    /// after a switch: ``GenerationManifest/followGrace``); 1 elsewhere (a file, a row, a point, or the
    /// coordination store's record).
    static func generationFollowEvery(_ configuration: PipelineConfiguration) -> Int {
        let generations = configuration.generations
        let coordinated = generations.coordination != nil || generations.coordinationEnv != nil
        return configuration.sink.kind == .pinecone && !coordinated ? 4 : 1
    }

    /// Refuses to serve with access control on when the store cannot express the access filter inside its
    /// own query (docs/ACCESS.md): a search would otherwise fail, or worse be filtered afterwards. Asked of
    /// the store with one search of a single result; a store that holds nothing yet, or cannot be reached
    /// now, is asked at each request instead (which refuses the same way, as a 400).
    /// - Throws: ``SluiceError/Code/configuration`` naming the store and the filter.
    func checkAccessFilter() async throws {
        let access = configuration.access
        guard let filter = AccessIdentity(principal: "sluice-probe", groups: []).filter(access) else { return }
        let sink = searcher.sink
        try access.requireExpressible(in: sink.filterLimits, store: String(sink.name.prefix { $0 != ":" }))
        do {
            try filter.check(sink.filterLimits, store: sink.name)
            guard let dimensions = try await sink.info().dimensions, dimensions > 0 else { return }
            let probe = [Float](repeating: 1 / Float(dimensions).squareRoot(), count: dimensions)
            _ = try await sink.search(SearchRequest(mode: .vector, vector: probe, k: 1, filter: filter))
        } catch let error as SluiceError where error.code == .usage {
            throw SluiceError(
                .configuration,
                "access control is on, but \(sink.name.prefix { $0 != ":" }) cannot express the access filter (\(filter)) in its own query, and Sluice never filters results afterwards: \(error.message)"
            )
        } catch {
            logger.warning("the access filter could not be tried on the store at start-up: \(error)")
        }
    }

    func makeRouter() -> Router<BasicRequestContext> {
        let serve = configuration.serve
        let router = Router()
        router.add(middleware: APIMiddleware(metrics: metrics, redaction: redaction))
        router.add(
            middleware: BrowserGuardMiddleware(
                hosts: serve.bindsLoopback ? HostPolicy(allowedHosts: serve.allowedHosts) : nil,
                listening: listening,
                checksOrigin: token == nil && keys == nil && jwt == nil,
                origins: Set(serve.corsOrigins)
            )
        )
        router.add(middleware: OriginPolicyMiddleware(origins: Set(serve.corsOrigins)))
        if let audit {
            router.add(
                middleware: AuditMiddleware(
                    log: audit,
                    access: configuration.access,
                    writesQueryText: serve.auditQueryText
                )
            )
        }
        router.add(middleware: MethodPolicyMiddleware())
        router.add(
            middleware: BearerAuthMiddleware(
                token: token,
                keys: keys,
                jwt: jwt,
                access: configuration.access,
                metrics: metrics,
                limiter: limiter
            )
        )
        router.add(
            middleware: RequestBodyPolicyMiddleware(
                maxBytes: serve.maxBodyBytes,
                timeout: .milliseconds(Int64(serve.requestTimeoutSeconds * 1000))
            )
        )
        let routes = APIRoutes(server: self)
        routes.add(to: router)
        return router
    }
}
