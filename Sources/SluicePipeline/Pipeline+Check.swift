import Foundation
import SluiceCore
import SluiceSinks
import SluiceState

/// One line of `sluice check`: what was checked, how it went, and what to do about it.
public struct DependencyCheck: Sendable, Hashable, Codable {
    /// How a check went; its exit code is ``DependencyCheck/exitCode(of:)``'s.
    public enum Outcome: String, Sendable, Hashable, Codable {
        /// Works as the pipeline needs it.
        case ok
        /// Cannot be reached (or is busy) now: retry later (exit 6).
        case unavailable
        /// Reached, but wrong for this pipeline (a setting, a key, another embedder's vectors) (exit 1).
        case failed
        /// The state's lock is held by a run in progress: wait for it (exit 3, as `run` exits then).
        case locked
        /// Works, but likely not as meant: files Sluice could read are left out by `source.include`, or the
        /// store works less well than it could (``SinkInfo/warnings``: pgvector's keyword search without accent
        /// folding). The fix says what to do; alone it exits 0, as `ok` does.
        case warning
    }

    /// `pipeline`, `embedder`, `reranker`, `captioner`, `store`, `source` or `state`.
    public var subject: String
    public var outcome: Outcome
    public var detail: String
    /// What to do, when the outcome is not ``Outcome/ok``.
    public var fix: String?

    public init(_ subject: String, _ outcome: Outcome, _ detail: String, fix: String? = nil) {
        self.subject = subject
        self.outcome = outcome
        self.detail = detail
        self.fix = fix
    }

    /// The exit code of a list of checks: 1 when any failed (a setting to fix), else 3 when a run holds the
    /// state's lock, else 6 when any dependency was unavailable, else 0 (warnings included).
    public static func exitCode(of checks: [DependencyCheck]) -> RunExitCode {
        if checks.contains(where: { $0.outcome == .failed }) { return .usage }
        if checks.contains(where: { $0.outcome == .locked }) { return .lockHeld }
        if checks.contains(where: { $0.outcome == .unavailable }) { return .dependencyUnavailable }
        return .success
    }
}

extension Pipeline {
    /// Whether the store lives behind a network connection, as the store itself says
    /// (``VectorSink/isRemote``): a sink a library user supplies answers for itself, as the built-in ones do.
    var sinkIsRemote: Bool { components.sink.isRemote }

    /// The cheap checks a run makes before it takes any document: the store answers
    /// (``VectorSink/checkAvailability()``, whatever store it is) and the embedder's endpoint answers
    /// (``Embedder/checkReachable()``). A dependency that cannot be reached stops the run here with
    /// ``SluiceError/Code/dependencyUnavailable`` (exit 6), before anything is marked failed. Other errors
    /// are left to the steps that follow (`prepare` reports them with its context).
    func checkDependencies() async throws {
        do {
            try await components.sink.checkAvailability()
        } catch let error as SluiceError where error.isUnavailability {
            throw Self.storeUnavailable(components.sink.name, error)
        } catch {
            // Refusals and odd answers are reported by `prepare`, as before.
        }
        try await components.embedder.checkReachable()
    }

    /// Lines of `sluice check` about how the pipeline file is written: deprecated keys (with the key to
    /// use), and `sink` keys the chosen store does not read (as its descriptor says).
    static func settingsNotices(_ configuration: PipelineConfiguration) -> [DependencyCheck] {
        var checks = configuration.notes.deprecations.map {
            DependencyCheck("pipeline", .ok, $0, fix: "rename the key in the pipeline file")
        }
        let unread = SinkFactory.unreadKeys(configuration)
        if !unread.isEmpty {
            checks.append(
                DependencyCheck(
                    "pipeline",
                    .ok,
                    "\(unread.joined(separator: ", ")) not read by sink.kind \(configuration.sink.kind)",
                    fix:
                        "remove \(unread.count == 1 ? "it" : "them"), or set the sink.kind \(unread.count == 1 ? "it is" : "they are") for"
                )
            )
        }
        return checks
    }

    static func storeUnavailable(_ name: String, _ error: SluiceError) -> SluiceError {
        SluiceError(
            .dependencyUnavailable,
            "the store \(name) cannot be reached: \(error.message). Nothing was marked failed; run again when it is back",
            cause: error
        )
    }

    /// `sluice check`: really talks to every dependency, one ``DependencyCheck`` each: the embedder (one
    /// embedding of a short text), the store (reachable, its dimensions, metric and embedder against the
    /// pipeline's), the source (exists, readable, how many files match) and the state (lock, checkpoint,
    /// embedder and shard). Writes nothing but what taking and releasing the state lock writes (the
    /// components were built before: a local store not created yet is created empty by then).
    public func check() async -> [DependencyCheck] {
        var checks: [DependencyCheck] = []
        checks.append(await checkEmbedder())
        if let reranker = await checkReranker() { checks.append(reranker) }
        if let captioner = await checkCaptioner() { checks.append(captioner) }
        checks.append(await checkStore())
        checks.append(await checkSource())
        checks.append(checkState())
        checks += checkAccess()
        for adjustment in components.adjustments {
            checks.append(
                DependencyCheck(
                    "pipeline",
                    .ok,
                    adjustment,
                    fix: components.sink.embedsText
                        ? "remove those keys from the pipeline file to silence this"
                        : "lower chunk.max_tokens to the limit to silence this"
                )
            )
        }
        checks += Self.settingsNotices(configuration)
        return checks
    }

    private func checkEmbedder() async -> DependencyCheck {
        let embedder = components.embedder
        let identity = embedder.identity
        if components.sink.embedsText {
            return DependencyCheck(
                "embedder",
                .ok,
                "none of Sluice's: \(configuration.sink.kind) chunks and embeds each document itself (the text is sent, no vectors)"
            )
        }
        do {
            try await embedder.checkReachable()
            let vectors = try await embedder.embed(["sluice check"])
            guard vectors.count == 1, let vector = vectors.first else {
                return DependencyCheck(
                    "embedder",
                    .failed,
                    "\(identity): answered \(vectors.count) vectors for one text",
                    fix: "check embed.provider and embed.base_url"
                )
            }
            guard vector.count == identity.dimensions else {
                return DependencyCheck(
                    "embedder",
                    .failed,
                    "\(identity): answered \(vector.count)-dimensional vectors, embed.dimensions is \(identity.dimensions)",
                    fix: "set embed.dimensions to \(vector.count), or embed.request_dimensions"
                )
            }
            return DependencyCheck("embedder", .ok, "\(identity): embedded one text (\(vector.count) dimensions)")
        } catch {
            return Self.failedCheck(
                "embedder",
                "\(identity)",
                error,
                refused: "check the key in the variable embed.api_key_env names, and the account's quota",
                unavailable: "start the embedding service or correct embed.base_url, then run again",
                otherwise: "check the embed section of the pipeline file"
            )
        }
    }

    /// The line for a dependency whose call failed: a refused key fails (exit 1), a service that cannot be
    /// reached is unavailable (exit 6), anything else fails; each with the fix given for it.
    static func failedCheck(
        _ name: String,
        _ subject: String,
        _ error: any Error,
        refused: String,
        unavailable: String,
        otherwise: String,
        unreachable: String = ""
    ) -> DependencyCheck {
        switch error {
        case let error as SluiceError where error.code == .providerRefused:
            DependencyCheck(name, .failed, "\(subject): \(error.message)", fix: refused)
        case let error as SluiceError where error.isUnavailability:
            DependencyCheck(name, .unavailable, "\(subject): \(unreachable)\(error.message)", fix: unavailable)
        default:
            DependencyCheck(name, .failed, "\(subject): \(failureDescription(error))", fix: otherwise)
        }
    }

    private func checkStore() async -> DependencyCheck {
        let sink = components.sink
        let identity = components.embedder.identity
        let info: SinkInfo
        do {
            info = try await sink.info()
        } catch {
            return Self.failedCheck(
                "store",
                sink.name,
                error,
                refused: "check the key in the variable sink.api_key_env names",
                unavailable: "start the store or correct sink.url, then run again",
                otherwise: "check the sink section of the pipeline file",
                unreachable: "cannot be reached: "
            )
        }
        guard info.exists else {
            return DependencyCheck(
                "store",
                .ok,
                "\(sink.name): reachable; nothing stored yet (the first run creates it)"
            )
        }
        if let dimensions = info.dimensions, dimensions != identity.dimensions, info.count > 0 || sinkIsRemote {
            return DependencyCheck(
                "store",
                .failed,
                "\(sink.name): holds \(dimensions)-dimensional vectors, the embedder makes \(identity.dimensions)",
                fix: "use another collection/table/index, or run with --reembed to replace every vector"
            )
        }
        if sinkIsRemote, let metric = info.metric, metric != configuration.sink.metric.rawValue {
            return DependencyCheck(
                "store",
                .failed,
                "\(sink.name): uses the \(metric) metric, sink.metric is \(configuration.sink.metric.rawValue)",
                fix: "set sink.metric to \(metric), or use another collection/table/index"
            )
        }
        if let embedder = info.embedder, embedder != identity.description, info.count > 0 {
            return DependencyCheck(
                "store",
                .failed,
                "\(sink.name): holds vectors of \(embedder), the pipeline embeds with \(identity)",
                fix: "run with --reembed to replace every vector, or use another sink"
            )
        }
        let shape = [info.dimensions.map { "\($0) dimensions" }, info.metric, Self.indexSummary(info.details)]
            .compactMap { $0 }.joined(separator: ", ")
        if !info.warnings.isEmpty {
            return DependencyCheck(
                "store",
                .warning,
                "\(sink.name): reachable, \(info.count) vectors; \(info.warnings.joined(separator: "; "))",
                fix: "see docs/STORES.md for what the store needs"
            )
        }
        return DependencyCheck(
            "store",
            .ok,
            "\(sink.name): reachable, \(info.count) vectors\(shape.isEmpty ? "" : " (\(shape))")"
        )
    }

    private func checkSource() async -> DependencyCheck {
        let source: any DocumentSource
        do {
            source = try makeSource(preview: true)
        } catch {
            return DependencyCheck(
                "source",
                .failed,
                Self.failureDescription(error),
                fix: "correct the source settings"
            )
        }
        return await source.check(shard: options.shard)
    }

    private func checkState() -> DependencyCheck {
        let directory = stateDirectory
        guard FileManager.default.fileExists(atPath: directory.path) else {
            return DependencyCheck("state", .ok, "\(directory.path): no state yet (the first run creates it)")
        }
        do {
            let lock = try StateLock(directory: directory)
            withExtendedLifetime(lock) {}
        } catch let error as SluiceError where error.code == .lockHeld {
            return DependencyCheck("state", .locked, error.message, fix: "wait for the run in progress to end")
        } catch {
            return DependencyCheck(
                "state",
                .failed,
                "\(directory.path): \(Self.failureDescription(error))",
                fix: "check the folder's permissions and free space"
            )
        }
        guard FileManager.default.fileExists(atPath: directory.appendingPathComponent("data.mdb").path) else {
            return DependencyCheck("state", .ok, "\(directory.path): lock free, no checkpoint yet")
        }
        do {
            let checkpoint = try CheckpointStore(
                directory: directory,
                readOnly: true,
                generation: configuration.generation
            )
            let documents = try checkpoint.documentCount()
            let identity = components.embedder.identity.description
            if let stored = try checkpoint.metadata("embedder"), stored != identity, documents > 0 {
                return DependencyCheck(
                    "state",
                    .failed,
                    "\(directory.path): built with embedder \(stored), the pipeline now uses \(identity)",
                    fix: "run with --reembed to replace every vector, or use another state and sink"
                )
            }
            let recorded = try checkpoint.metadata("shard") ?? Shard.whole.description
            if recorded != options.shard.description, documents > 0 {
                return DependencyCheck(
                    "state",
                    .failed,
                    "\(directory.path): built for shard \(recorded), this check is for shard \(options.shard)",
                    fix: "give each shard its own state directory"
                )
            }
            return DependencyCheck(
                "state",
                .ok,
                "\(directory.path): lock free, readable, \(documents) documents, shard \(recorded)"
            )
        } catch {
            return DependencyCheck(
                "state",
                .failed,
                "\(directory.path): \(Self.failureDescription(error))",
                fix: "restore the state from a backup, or start a new one"
            )
        }
    }
}
