import Foundation
import Logging
import SluiceCore
import SluiceExtract
import SluiceState

/// One pipeline run: scan → extract → chunk → hash → (dedupe) embed → upsert → commit.
///
/// The pipeline owns the state lock, the checkpoint and the stages; stages are joined by bounded
/// ``StageChannel``s, so a slow stage suspends the ones before it and memory stays flat.
public actor Pipeline {
    public let configuration: PipelineConfiguration
    public let components: PipelineComponents
    public let options: RunOptions
    let logger: Logger

    public init(configuration: PipelineConfiguration, components: PipelineComponents, options: RunOptions = RunOptions(), logger: Logger) {
        self.configuration = configuration
        self.components = components
        self.options = options
        self.logger = logger
    }

    var stateDirectory: URL { configuration.resolve(configuration.state) }
    var sourceRoot: URL { configuration.resolve(configuration.source.path) }

    /// Runs the pipeline to the end of the source (or until `shutdown` is requested).
    /// - Returns: the run's statistics; ``RunStats/exitCode`` maps them to an exit code.
    /// - Throws: ``SluiceError`` for what stops a run before or outside per-document work (lock held,
    ///   configuration, embedder mismatch, mass delete, checkpoint failure).
    public func run(shutdown: ShutdownSignal = ShutdownSignal(), progress: (@Sendable (RunProgress) -> Void)? = nil) async throws -> RunStats {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: sourceRoot.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw SluiceError(.configuration, "source folder \(sourceRoot.path) does not exist or is not a folder")
        }
        let lock = try StateLock(directory: stateDirectory)
        defer { withExtendedLifetime(lock) {} }
        let checkpoint = try CheckpointStore(directory: stateDirectory)
        // LMDB write transactions block (writer lock, fsync): every one runs on the state executor.
        let stateExecutor = BlockingExecutor(label: "sl-state", threads: 1)
        defer { stateExecutor.shutdown() }
        let identity = components.embedder.identity
        try guardShard(checkpoint: checkpoint)
        try await SinkReset.completePending(sink: components.sink, checkpoint: checkpoint, stateExecutor: stateExecutor, logger: logger)
        try await guardEmbedder(identity, checkpoint: checkpoint, stateExecutor: stateExecutor)
        try await components.sink.prepare(embedder: identity)
        let shard = options.shard
        try await stateExecutor.run {
            try checkpoint.setMetadata("embedder", identity.description)
            try checkpoint.setMetadata("shard", shard.description)
        }

        let tally = RunTally()
        let runID = Self.makeRunID()
        let started = Date()
        let clock = ContinuousClock()
        let startInstant = clock.now
        logger.info("run started", metadata: ["sluice-run": "\(runID)", "sluice-source": "\(sourceRoot.path)", "sluice-sink": "\(components.sink.name)", "sluice-embedder": "\(identity)", "sluice-shard": "\(options.shard)"])

        let scanner = SourceScanner(configuration: configuration.source, root: sourceRoot, shard: options.shard)
        if options.prune ?? configuration.run.prune, !options.retryFailed {
            try await prune(scanner: scanner, checkpoint: checkpoint, stateExecutor: stateExecutor, tally: tally)
        }

        var record = RunRecord(runID: runID, startedAt: started.timeIntervalSince1970, configurationHash: configurationHash)
        try await stateExecutor.run { [record] in try checkpoint.saveRun(record) }

        let extractExecutor = BlockingExecutor(label: "sl-extract", threads: configuration.extract.parallelism)
        defer { extractExecutor.shutdown() }
        let auditLog = try options.embedAuditLog.map { path -> FileHandle in
            if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            handle.seekToEndOfFile()
            return handle
        }

        let buffer = configuration.run.buffer
        let extractWorkers = configuration.extract.parallelism
        let chunkWorkers = configuration.chunk.parallelism
        let upsertWorkers = configuration.run.upsertParallelism
        let toExtract = StageChannel<DocumentWork>(capacity: buffer, producers: 1)
        let toChunk = StageChannel<DocumentWork>(capacity: buffer, producers: extractWorkers)
        let toHash = StageChannel<DocumentWork>(capacity: buffer, producers: chunkWorkers)
        let toEmbed = StageChannel<DocumentWork>(capacity: buffer, producers: chunkWorkers)
        let toUpsert = StageChannel<DocumentWork>(capacity: buffer, producers: 1)
        let toCommit = StageChannel<DocumentWork>(capacity: buffer, producers: upsertWorkers)

        let extract = TransformStage(
            name: "extract", workers: extractWorkers,
            transform: ExtractStep(
                registry: components.extractors, executor: extractExecutor,
                maxBytes: Int(configuration.extract.maxFileMB * 1_048_576),
                timeout: .milliseconds(Int64(configuration.extract.timeoutSeconds * 1000)), tally: tally,
                sharing: ExtractionSharing(budgetBytes: 16 << 20),
                persistent: extractionCacheBytes > 0
                    ? PersistentExtractions(checkpoint: checkpoint, stateExecutor: stateExecutor, capBytes: extractionCacheBytes) : nil
            ).callAsFunction)
        let chunk = TransformStage(name: "chunk", workers: chunkWorkers, transform: ChunkStep(chunker: components.chunker).callAsFunction)
        let hash = TransformStage(name: "hash", workers: chunkWorkers, transform: HashStep().callAsFunction)
        // A provider that refuses to go on (quota, credentials) stops intake like a signal does; the run
        // then exits with code 5 instead of 4.
        let providerStop = ShutdownSignal()
        let embed = EmbedStage(
            embedder: components.embedder, configuration: configuration.embed, checkpoint: checkpoint,
            stateExecutor: stateExecutor, tally: tally, auditLog: auditLog,
            onRefusal: { [logger] error in
                tally.update { if $0.providerRefusal == nil { $0.providerRefusal = error.message } }
                providerStop.request()
                logger.error("the embedding provider refused to go on: stopping intake", metadata: ["sluice-reason": "\(error.message)"])
            })
        let upsert = UpsertStage(
            sink: components.sink, checkpoint: checkpoint, stateExecutor: stateExecutor, workers: upsertWorkers,
            recordsPerWrite: configuration.sink.batch, tally: tally,
            staleBudget: StaleDeletionBudget(fraction: configuration.run.maxDeleteFraction, unlimited: options.allowMassDelete))
        let commit = CommitStage(checkpoint: checkpoint, stateExecutor: stateExecutor, tally: tally, logger: logger)
        let scanMeter = StageMeter(name: "scan", workers: 1)

        var interrupted = false
        var notReached = 0
        var commitError: (any Error)?
        var stateDamage: SluiceError?
        let scanned = ScanCounter()
        do {
            // Every task of the run sees the signal: waits that only pass time (retry backoff, rate-limit
            // pauses of the embedder and of the stores) end at once on the first signal.
            try await ShutdownSignal.$current.withValue(shutdown) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { await extract.run(input: toExtract, output: toChunk) }
                    group.addTask { await chunk.run(input: toChunk, output: toHash) }
                    group.addTask { await hash.run(input: toHash, output: toEmbed) }
                    group.addTask { await embed.run(input: toEmbed, output: toUpsert) }
                    group.addTask { await upsert.run(input: toUpsert, output: toCommit) }
                    let commitTask = Task { try await commit.run(input: toCommit) }
                    let reporter: Task<Void, Never>? = progress.map { report in
                        Task {
                            while !Task.isCancelled {
                                try? await Task.sleep(for: .seconds(1))
                                if Task.isCancelled { break }
                                report(RunProgress(elapsedSeconds: startInstant.duration(to: clock.now).seconds, scanned: scanned.value, stats: tally.snapshot, inFlight: tally.inFlight.now))
                            }
                        }
                    }
                    defer { reporter?.cancel() }

                    do {
                        try await scanner.walk { entry in
                            if shutdown.isRequested || providerStop.isRequested {
                                // Stop taking documents; keep walking (stat only) to count what was not reached.
                                interrupted = true
                                if case .success(let file) = entry {
                                    if options.retryFailed {
                                        if (try? checkpoint.document(file.key))??.status != .failed { return true }
                                    }
                                    notReached += 1
                                }
                                return true
                            }
                            let scanStart = clock.now
                            var document: DocumentWork
                            switch entry {
                            case .failure(let problem):
                                let file = SourceFile(key: problem.key, url: scanner.root.appendingPathComponent(problem.key), size: 0, mtimeNanoseconds: 0)
                                document = DocumentWork(file: file, previous: try? checkpoint.document(problem.key))
                                document.outcome = .failed(SluiceError(problem.error, problem.message))
                            case .success(let file):
                                let previous: DocumentRecord?
                                do {
                                    previous = try checkpoint.document(file.key)
                                } catch let error as SluiceError where error.code == .stateCorrupt {
                                    // Going on would overwrite the damaged record and forget its vectors: stop.
                                    stateDamage = error
                                    return false
                                } catch {
                                    document = DocumentWork(file: file, previous: nil)
                                    document.fail(error, as: .state)
                                    break
                                }
                                if options.retryFailed && previous?.status != .failed { return true }
                                if let previous, previous.status == .indexed, previous.size == file.size,
                                    previous.mtimeNanoseconds == file.mtimeNanoseconds, previous.pendingIDs.isEmpty
                                {
                                    // The stat-only fast path: unchanged without reading a byte.
                                    tally.update { $0.documentsSkipped += 1 }
                                    scanned.increment()
                                    scanMeter.worked(scanStart.duration(to: clock.now), itemsOut: 0)
                                    return true
                                }
                                document = DocumentWork(file: file, previous: previous)
                            }
                            scanned.increment()
                            tally.admitted()
                            scanMeter.worked(scanStart.duration(to: clock.now))
                            let sendStart = clock.now
                            // A cancelled run stops walking.
                            guard let waited = try? await toExtract.send(document) else { return false }
                            if waited { scanMeter.blocked(sendStart.duration(to: clock.now)) }
                            return true
                        }
                        if let stateDamage { throw stateDamage }
                    } catch {
                        toExtract.finish()
                        try await group.waitForAll()
                        _ = await commitTask.result
                        throw error
                    }
                    toExtract.finish()
                    try await group.waitForAll()
                    do { try await commitTask.value } catch { commitError = error }
                }
            }
        } catch {
            // The record says how the run ended, as the process's exit code will.
            record.endedAt = Date().timeIntervalSince1970
            record.exitCode = RunExitCode(for: error).rawValue
            record.failure = Self.failureDescription(error)
            try? await stateExecutor.run { [record] in try checkpoint.saveRun(record) }
            throw error
        }
        auditLog.map { try? $0.close() }
        var failure: (any Error)? = commitError.map { SluiceError.wrap($0, as: .state, "checkpoint commit failed") }
        // Deferred store work (index builds, file compaction) once every write of the run is acknowledged.
        do {
            try await components.sink.finish()
        } catch {
            let reason = (error as? SluiceError)?.message ?? "\(error)"
            failure = failure ?? SluiceError(.sinkFailed, "finishing the sink (\(components.sink.name)) failed: \(reason)", cause: error)
        }
        if failure == nil {
            do {
                try await collectExtractions(checkpoint: checkpoint, stateExecutor: stateExecutor, after: tally.snapshot)
            } catch {
                failure = error
            }
        }

        var stats = tally.snapshot
        stats.runID = runID
        stats.startedAt = started.timeIntervalSince1970
        stats.wallSeconds = startInstant.duration(to: clock.now).seconds
        // Interrupted: the scanner stopped taking documents, or (the scan was over) a signal cut the waits
        // of documents in flight, which were left for the next run.
        stats.interrupted = (interrupted || (shutdown.isRequested && stats.documentsNotReached > 0)) && stats.providerRefusal == nil
        stats.documentsNotReached += notReached
        var scan = scanMeter.snapshot
        scan.itemsIn = scanned.value
        stats.phases = [scan, extract.meter.snapshot, chunk.meter.snapshot, hash.meter.snapshot, embed.meter.snapshot, upsert.meter.snapshot, commit.meter.snapshot]
        stats.maxDocumentsInFlight = tally.inFlight.maximum
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
        logger.info("run finished", metadata: ["sluice-run": "\(runID)", "sluice-upserted": "\(stats.documentsUpserted)", "sluice-skipped": "\(stats.documentsSkipped)", "sluice-failed": "\(stats.documentsFailed)"])
        return stats
    }

    /// The most documents that can be between the scanner and the checkpoint at once, implied by the
    /// buffer sizes and worker counts: six buffers, one document per extract/chunk/hash worker, what
    /// upsert and commit take per batch (at most one buffer's worth plus one), and in the embed stage the
    /// documents of the forming batch, of the batches in flight and of the completions being forwarded.
    public nonisolated var inFlightBound: Int {
        let run = configuration.run
        let buffers = 6 * run.buffer
        let workers = configuration.extract.parallelism + 2 * configuration.chunk.parallelism
        let embedding = (2 * configuration.embed.parallelism + 1) * configuration.embed.batch + 1
        let upsert = run.upsertParallelism * min(32, run.buffer + 1)
        let commit = min(256, run.buffer + 1)
        return buffers + workers + embedding + upsert + commit + 1
    }

    static func failureDescription(_ error: any Error) -> String {
        (error as? SluiceError)?.description ?? "\(error)"
    }

    private var configurationHash: String {
        ContentHash(utf8: String(describing: configuration)).hex
    }

    private static func makeRunID() -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyyMMdd'T'HHmmss"
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date()) + "-" + String(UInt32.random(in: 0...UInt32.max), radix: 16)
    }
}

/// Documents the scanner has looked at so far (for progress).
final class ScanCounter: Sendable {
    private let count = Atomic<Int>(0)
    func increment() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

import Synchronization
