import Foundation
import Logging
import SluiceCore
import SluiceEmbed
import SluiceExtract
import SluiceState

/// One pipeline run: scan → extract → chunk → hash → (dedupe) embed → upsert → commit.
///
/// Each call (``run(shutdown:progress:stopped:)``, ``verify(repair:shutdown:)``, ``dryRun(after:)``, …) owns the state lock,
/// the checkpoint and the stages for as long as it lasts; stages are joined by bounded `StageChannel`s, so a
/// slow stage suspends the ones before it and memory stays flat.
///
/// A value: the pipeline holds only its settings and components, and nothing of a run outlives the call.
/// Two runs on one state folder are kept apart by the state lock, in one process as across processes (an actor
/// never did that: a call that suspends lets the next one in).
public struct Pipeline: Sendable {
    public let configuration: PipelineConfiguration
    public let components: PipelineComponents
    public let options: RunOptions
    let logger: Logger

    public init(
        configuration: PipelineConfiguration,
        components: PipelineComponents,
        options: RunOptions = RunOptions(),
        logger: Logger
    ) {
        self.configuration = configuration
        self.components = components
        self.options = options
        self.logger = logger
    }

    var stateDirectory: URL { configuration.resolve(configuration.state) }
    var sourceRoot: URL { configuration.resolve(configuration.source.path) }

    /// Runs the pipeline to the end of the source (or until `shutdown` is requested).
    /// - Parameter stopped: called, before the error is thrown, with the figures reached so far when the run
    ///   stops on an error once its documents have started (``RunStats/stopped`` set).
    /// - Returns: the run's statistics; ``RunStats/exitCode`` maps them to an exit code.
    /// - Throws: ``SluiceError`` for what stops a run before or outside per-document work (lock held,
    ///   configuration, an unavailable store or embedder, embedder mismatch, mass delete, checkpoint failure).
    public func run(
        shutdown: ShutdownSignal = ShutdownSignal(),
        progress: (@Sendable (RunProgress) -> Void)? = nil,
        stopped: (@Sendable (RunStats) -> Void)? = nil
    ) async throws -> RunStats {
        // Set up: the source, the state lock, the checkpoint and the executor of its writes.
        let source = try makeSource()
        // The vision model of `extract.images.caption`: a key's variable unset is the pipeline's mistake (exit 1).
        let captioner = try makeCaptioner()
        try source.prepare()
        let lock = try StateLock(directory: stateDirectory)
        defer { withExtendedLifetime(lock) {} }
        source.removeLeftovers()
        let checkpoint = try CheckpointStore(directory: stateDirectory, generation: configuration.generation)
        source.recall { key in try? checkpoint.document(key) }
        // LMDB write transactions block (writer lock, fsync): every one runs on the state executor.
        let stateExecutor = BlockingExecutor(label: "sl-state", threads: 1)
        defer { stateExecutor.shutdown() }

        // The store and the embedder answer: one that cannot be reached stops the run here (exit 6),
        // before any document is taken, so none is marked failed.
        try await checkDependencies()
        try await captioner?.checkReachable()

        // Guards: the shard, an interrupted sink reset, the embedder; then the sink is prepared.
        let identity = components.embedder.identity
        try guardShard(checkpoint: checkpoint)
        try await SinkReset.completePending(
            sink: components.sink,
            checkpoint: checkpoint,
            stateExecutor: stateExecutor,
            logger: logger
        )
        try await guardEmbedder(identity, checkpoint: checkpoint, stateExecutor: stateExecutor)
        do {
            try await components.sink.prepare(embedder: identity)
        } catch let error as SluiceError where error.isUnavailability && sinkIsRemote {
            throw Self.storeUnavailable(components.sink.name, error)
        }
        if let notice = components.sink.preparationNotice { logger.warning("\(components.sink.name): \(notice)") }
        // A keyword index rebuilt by the preparation leaves out the records that do not decode, and says so.
        if let notice = components.sink.readNotice { logger.warning("\(components.sink.name): \(notice)") }
        let shard = options.shard
        let shaping = ShapingSettings(configuration, extractors: components.extractors.extractors)
        let previousShaping = try await stateExecutor.run {
            let previous = try checkpoint.metadata("shaping").map(ShapingSettings.init(text:))
            let documents = try checkpoint.documentCount()
            // With generations, a generation's chunks are never re-shaped in place (docs/GENERATIONS.md).
            if documents > 0, let previous, previous != shaping, let generation = configuration.generation {
                throw Self.shapingChangeRefused(generation: generation, changes: shaping.changes(from: previous))
            }
            try checkpoint.setMetadata("embedder", identity.description)
            try checkpoint.setMetadata("shard", shard.description)
            try checkpoint.setMetadata("shaping", shaping.text)
            return documents > 0 ? previous : nil
        }
        if let previousShaping, previousShaping != shaping {
            // docs/DESIGN.md §12: never two chunkings in one index. Each document's fingerprint holds the
            // settings its extractor reads, so those documents are processed again; unchanged texts' vectors
            // come from the cache.
            let which = shaping.extractorsAffected(since: previousShaping).map {
                "the documents read by the \($0.sorted().joined(separator: ", ")) extractor\($0.count == 1 ? "" : "s")"
                    + " are processed again"
            }
            let embedding =
                previousShaping.values["chunk.context"] != shaping.values["chunk.context"]
                ? "chunk.context changed what is embedded: chunks are embedded again unless the cache has their input"
                : "vectors of unchanged texts come from the embedding cache"
            logger.notice(
                "the settings that shape chunks changed since the last run: \(which ?? "every document is processed again") (\(embedding); to change them without serving a mix, build a candidate generation instead: docs/GENERATIONS.md)",
                metadata: ["sluice-changes": "\(shaping.changes(from: previousShaping).joined(separator: "; "))"]
            )
        }

        // A new or lost state takes the vectors the store holds instead of embedding them again.
        let adopting = try await startAdoption(checkpoint: checkpoint, stateExecutor: stateExecutor)

        let tally = RunTally()
        let runID = Self.makeRunID()
        let started = Date()
        let clock = ContinuousClock()
        let startInstant = clock.now
        logger.info(
            "run started",
            metadata: [
                "sluice-run": "\(runID)", "sluice-source": "\(source.name)",
                "sluice-sink": "\(components.sink.name)", "sluice-embedder": "\(identity)",
                "sluice-shard": "\(options.shard)",
            ]
        )

        for adjustment in components.adjustments { logger.warning("\(adjustment)") }

        if options.prune ?? configuration.run.prune, !options.retryFailed {
            try await prune(source: source, checkpoint: checkpoint, stateExecutor: stateExecutor, tally: tally)
        }
        var record = RunRecord(
            runID: runID,
            startedAt: started.timeIntervalSince1970,
            configurationHash: configurationHash
        )
        try await stateExecutor.run { [record] in try checkpoint.saveRun(record) }

        // Stages: scan → extract → chunk → hash → (dedupe) embed → upsert → commit, joined by channels.
        let extractExecutor = BlockingExecutor(label: "sl-extract", threads: configuration.extract.parallelism)
        defer { extractExecutor.shutdown() }
        let auditLog = try openAuditLog()
        let stateDamage = StateDamage()
        let stages = makeStages(
            source: source,
            checkpoint: checkpoint,
            stateExecutor: stateExecutor,
            extractExecutor: extractExecutor,
            tally: tally,
            auditLog: auditLog,
            shutdown: shutdown,
            stateDamage: stateDamage,
            captioner: captioner,
            adopting: adopting
        )

        // Run them to the end of the source.
        let ended: RunStages.Ending
        do {
            let report = progress.map { report in
                { @Sendable in
                    report(
                        RunProgress(
                            elapsedSeconds: startInstant.duration(to: clock.now).seconds,
                            scanned: stages.scan.scanned.value,
                            stats: tally.snapshot,
                            inFlight: tally.inFlight.now,
                            total: stages.scan.scanned.total
                        )
                    )
                }
            }
            ended = try await stages.run(shutdown: shutdown, progress: report)
        } catch {
            // The record says how the run ended, as the process's exit code will.
            record.endedAt = Date().timeIntervalSince1970
            record.exitCode = RunExitCode(for: error).rawValue
            record.failure = Self.failureDescription(error)
            // A write on the way out with the run's own error: that error is the one to report, not this one.
            try? await stateExecutor.run { [record] in try checkpoint.saveRun(record) }
            var reached = tally.snapshot
            reached.runID = runID
            reached.startedAt = started.timeIntervalSince1970
            reached.wallSeconds = startInstant.duration(to: clock.now).seconds
            reached.phases = stages.phases
            reached.stopped = RunStop(error)
            stopped?(reached)
            throw error
        }
        auditLog.map { try? $0.close() }

        // Finish: deferred store work, then the extraction cache's upkeep.
        var failure: (any Error)? = stateDamage.error ?? ended.commitError
        // Deferred store work (index builds, file compaction) once every write of the run is acknowledged.
        do {
            try await components.sink.finish()
        } catch {
            let reason = (error as? SluiceError)?.message ?? "\(error)"
            failure =
                failure
                ?? SluiceError(
                    .sinkFailed,
                    "finishing the sink (\(components.sink.name)) failed: \(reason)",
                    cause: error
                )
        }
        if failure == nil {
            do {
                try await collectExtractions(
                    checkpoint: checkpoint,
                    stateExecutor: stateExecutor,
                    after: tally.snapshot
                )
            } catch {
                failure = error
            }
        }

        // Record: the statistics and the outcome, in the run's record.
        var stats = tally.snapshot
        stats.runID = runID
        stats.startedAt = started.timeIntervalSince1970
        stats.wallSeconds = startInstant.duration(to: clock.now).seconds
        // Interrupted: a signal came while the run ran, as docs/OPERATIONS.md says (exit 4, run again). It
        // stopped the scanner's intake, or cut the waits of documents in flight (left for the next run), or
        // found the scan over and every document in flight (they finished; the next run has nothing to do).
        stats.interrupted =
            (ended.scan.interrupted || shutdown.isRequested) && stats.providerRefusal == nil && stats.diskFull == nil
        stats.documentsNotReached += ended.scan.notReached
        stats.phases = stages.phases
        stats.maxDocumentsInFlight = tally.inFlight.maximum
        stats.filesLeftOut = source.leftOut.files > 0 ? source.leftOut.files : nil
        let upkeep = components.sink.upkeepFailures
        stats.upkeepFailures = upkeep.count > 0 ? upkeep : nil
        record.endedAt = Date().timeIntervalSince1970
        // The code the process exits with: an error that stops the run after its documents settled (a
        // failed commit, a failed index build) decides it, not the documents' outcomes.
        record.exitCode = failure.map { RunExitCode(for: $0).rawValue } ?? stats.exitCode.rawValue
        record.failure = failure.map(Self.failureDescription)
        record.stats = stats
        do {
            try await stateExecutor.run { [record] in try checkpoint.saveRun(record) }
        } catch {
            throw failure ?? error
        }
        if let failure { throw failure }
        try await finishAdoption(adopting, stats: stats, checkpoint: checkpoint, stateExecutor: stateExecutor)
        // Never silent: the store's upkeep that failed, once per kind with its reason.
        for (kind, reason) in stats.upkeepFailures?.reasons.sorted(by: { $0.key < $1.key }) ?? [] {
            logger.warning(
                "the store's keyword merges failed (\(kind)): \(reason)",
                metadata: [
                    "sluice-upkeep-failure": "\(kind)",
                    "sluice-upkeep-failures": "\(stats.upkeepFailures?.count ?? 0)",
                    "sluice-upkeep-stopped": "\(stats.upkeepFailures?.stopped ?? false)",
                ]
            )
        }
        if let skipped = source.skipped {
            // Never silent either: what the source itself passed over, and why.
            logger.notice("\(source.name): \(skipped)")
        }
        if let leftOut = source.leftOut.summary {
            // Never silent: a pattern that leaves files out says how many and which (issue 18).
            logger.notice(
                "source.include/exclude left out \(leftOut)",
                metadata: ["sluice-left-out": "\(source.leftOut.files)"]
            )
        }
        if !(options.prune ?? configuration.run.prune) && !options.retryFailed && !stats.interrupted {
            await noteVanishedDocuments(source: source, checkpoint: checkpoint, reached: stats)
        }
        logger.info(
            "run finished",
            metadata: [
                "sluice-run": "\(runID)", "sluice-upserted": "\(stats.documentsUpserted)",
                "sluice-skipped": "\(stats.documentsSkipped)", "sluice-failed": "\(stats.documentsFailed)",
                "sluice-source-requests": "\(source.requestSummary ?? "none")",
            ]
        )
        return stats
    }

    /// The file `--embed-audit-log` names, opened for appending (nil without the option).
    private func openAuditLog() throws -> FileHandle? {
        try options.embedAuditLog.map { path -> FileHandle in
            if !FileManager.default.fileExists(atPath: path) {
                _ = FileManager.default.createFile(atPath: path, contents: nil)
            }
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            handle.seekToEndOfFile()
            return handle
        }
    }

    /// The most documents that can be between the scanner and the checkpoint at once, implied by the
    /// buffer sizes and worker counts: six buffers, one document per extract/chunk/hash worker, what
    /// upsert and commit take per batch (at most one buffer's worth plus one), and in the embed stage the
    /// documents of the forming batch, of the batches in flight and of the completions being forwarded.
    public var inFlightBound: Int {
        let run = configuration.run
        let buffers = 6 * run.buffer
        let workers = configuration.extract.parallelism + 2 * configuration.chunk.parallelism
        let embedding = (2 * configuration.embed.requestsInFlight + 1) * configuration.embed.batch + 1
        let upsert = run.upsertParallelism * min(32, run.buffer + 1)
        let commit = min(256, run.buffer + 1)
        return buffers + workers + embedding + upsert + commit + 1
    }

    static func failureDescription(_ error: any Error) -> String {
        (error as? SluiceError)?.description ?? "\(error)"
    }

    /// The settings' fingerprint: an explicit, versioned encoding (``PipelineConfiguration/fingerprint``).
    private var configurationHash: String { configuration.fingerprint }

    private static func makeRunID() -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyyMMdd'T'HHmmss"
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date()) + "-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
    }
}
