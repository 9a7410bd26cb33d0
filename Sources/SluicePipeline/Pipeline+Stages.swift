import Foundation
import Logging
import SluiceCore
import SluiceEmbed
import SluiceExtract
import SluiceState

/// The stages of one run and the channels between them, as the flow reads:
/// scan → extract → chunk → hash → (dedupe) embed → upsert → commit.
struct RunStages: Sendable {
    /// How the stages ended.
    struct Ending: Sendable {
        var scan: ScanStage.Outcome
        /// Why the commit stage failed (its documents stay uncommitted and are redone by the next run).
        var commitError: SluiceError?
    }

    let scan: ScanStage
    /// A remote source's requests (the `fetch` row, after the scan's); nil for a folder.
    let fetch: StageMeter?
    let extract: TransformStage
    let chunk: TransformStage
    let hash: TransformStage
    let embed: EmbedStage
    let upsert: UpsertStage
    let commit: CommitStage

    let toExtract: StageChannel<DocumentWork>
    let toChunk: StageChannel<DocumentWork>
    let toHash: StageChannel<DocumentWork>
    let toEmbed: StageChannel<DocumentWork>
    let toUpsert: StageChannel<DocumentWork>
    let toCommit: StageChannel<DocumentWork>

    /// Runs every stage until the scan is over and every document reached the checkpoint.
    ///
    /// Every task of the run sees `shutdown` (``ShutdownSignal/current``): waits that only pass time
    /// (retry backoff, rate-limit pauses of the embedder and of the stores) end at once on the first signal.
    /// - Parameter progress: Called every second while the stages run.
    /// - Throws: what stops the scan (see ``ScanStage/run(output:)``), once the documents already sent
    ///   have reached the checkpoint.
    func run(shutdown: ShutdownSignal, progress: (@Sendable () -> Void)?) async throws -> Ending {
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
                            report()
                        }
                    }
                }
                defer { reporter?.cancel() }

                let scanned: ScanStage.Outcome
                do {
                    scanned = try await scan.run(output: toExtract)
                } catch {
                    try await group.waitForAll()
                    _ = await commitTask.result
                    throw error
                }
                try await group.waitForAll()
                var commitError: SluiceError?
                do {
                    try await commitTask.value
                } catch {
                    commitError = SluiceError.wrap(error, as: .state, "checkpoint commit failed")
                }
                return Ending(scan: scanned, commitError: commitError)
            }
        }
    }

    /// The statistics of each phase, in the flow's order.
    var phases: [PhaseStats] {
        var scanPhase = scan.meter.snapshot
        scanPhase.itemsIn = scan.scanned.value
        return [scanPhase] + (fetch.map { [$0.snapshot] } ?? []) + [
            extract.meter.snapshot, chunk.meter.snapshot, hash.meter.snapshot, embed.meter.snapshot,
            upsert.meter.snapshot, commit.meter.snapshot,
        ]
    }
}

extension Pipeline {
    /// Builds the stages of a run and their channels from the configuration.
    func makeStages(
        source: any DocumentSource,
        checkpoint: CheckpointStore,
        stateExecutor: BlockingExecutor,
        extractExecutor: BlockingExecutor,
        tally: RunTally,
        auditLog: FileHandle?,
        shutdown: ShutdownSignal,
        stateDamage: StateDamage,
        captioner: ImageCaptioner? = nil,
        adopting: Bool = false
    ) -> RunStages {
        let buffer = configuration.run.buffer
        let extractWorkers = configuration.extract.parallelism
        let chunkWorkers = configuration.chunk.parallelism
        let upsertWorkers = configuration.run.upsertParallelism
        // A provider that refuses to go on (quota, credentials) stops intake like a signal does; the run
        // then exits with code 5 instead of 4.
        let providerStop = ShutdownSignal()
        let logger = self.logger
        // The embed, upsert and commit stages' state writes, committed together when they wait together.
        let checkpointCommits = CheckpointCommits(checkpoint: checkpoint, executor: stateExecutor)
        let hashStep = HashStep(
            context: ChunkContext(
                configuration.chunk.context,
                counter: components.embedder.tokenCounter,
                maxInputTokens: components.embedder.limits.maxTokensPerInput
            )
        )
        // A new or lost state's documents take the store's vectors here, on the hash workers (``StoreAdoption``).
        let adoption =
            adopting
            ? StoreAdoption(
                sink: components.sink,
                checkpoint: checkpoint,
                stateExecutor: stateExecutor,
                embedder: components.embedder.identity,
                tally: tally,
                logger: logger
            ) : nil
        return RunStages(
            scan: ScanStage(
                source: source,
                checkpoint: checkpoint,
                retryFailed: options.retryFailed,
                tally: tally,
                stops: [shutdown, providerStop],
                metadataRules: DocumentMetadataRules(
                    configuration: configuration,
                    extractors: components.extractors.extractors
                )
            ),
            fetch: source.fetchMeter,
            extract: TransformStage(
                name: "extract",
                workers: extractWorkers,
                transform: ExtractStep(
                    source: source,
                    registry: components.extractors,
                    executor: extractExecutor,
                    maxBytes: Int(configuration.extract.maxFileMB * 1_048_576),
                    maxTextBytes: configuration.extract.maxTextBytes,
                    timeout: .milliseconds(Int64(configuration.extract.timeoutSeconds * 1000)),
                    tally: tally,
                    sharing: ExtractionSharing(budgetBytes: ExtractionSharing.runBudgetBytes),
                    persistent: extractionCacheBytes > 0
                        ? PersistentExtractions(
                            checkpoint: checkpoint,
                            stateExecutor: stateExecutor,
                            capBytes: extractionCacheBytes
                        ) : nil,
                    captioning: captioner.map { captioner in
                        var captioning = ImageCaptioning(captioner: captioner) { error in
                            tally.update { if $0.providerRefusal == nil { $0.providerRefusal = error.message } }
                            providerStop.request()
                        }
                        captioning.zip = configuration.extract.zip
                        return captioning
                    }
                ).callAsFunction
            ),
            chunk: TransformStage(
                name: "chunk",
                workers: chunkWorkers,
                transform: ChunkStep(
                    chunker: components.chunker,
                    maxTextBytes: configuration.extract.maxTextBytes
                ).callAsFunction
            ),
            hash: TransformStage(
                name: "hash",
                workers: chunkWorkers,
                transform: { document in
                    let hashed = await hashStep(document)
                    guard let adoption else { return hashed }
                    return await adoption(hashed)
                }
            ),
            embed: EmbedStage(
                embedder: components.embedder,
                configuration: configuration.embed,
                checkpoint: checkpoint,
                checkpointCommits: checkpointCommits,
                tally: tally,
                auditLog: auditLog,
                onRefusal: { error in
                    tally.update { if $0.providerRefusal == nil { $0.providerRefusal = error.message } }
                    providerStop.request()
                    logger.error(
                        "the embedding provider refused to go on: stopping intake",
                        metadata: ["sluice-reason": "\(error.message)"]
                    )
                }
            ),
            upsert: UpsertStage(
                sink: components.sink,
                checkpoint: checkpoint,
                stateExecutor: stateExecutor,
                checkpointCommits: checkpointCommits,
                workers: upsertWorkers,
                recordsPerWrite: configuration.sink.batch,
                tally: tally,
                staleBudget: StaleDeletionBudget(
                    fraction: configuration.run.maxDeleteFraction,
                    unlimited: options.allowMassDelete
                ),
                onDiskFull: { error in
                    tally.update { if $0.diskFull == nil { $0.diskFull = error.message } }
                    providerStop.request()
                    logger.error(
                        "a disk is full: stopping intake; documents in flight are left for the next run",
                        metadata: ["sluice-reason": "\(error.message)"]
                    )
                },
                onStateDamage: { error in
                    stateDamage.record(error)
                    providerStop.request()
                    logger.error(
                        "the checkpoint cannot be read: stopping intake",
                        metadata: ["sluice-reason": "\(error.message)"]
                    )
                }
            ),
            commit: CommitStage(
                checkpointCommits: checkpointCommits,
                tally: tally,
                logger: logger
            ),
            toExtract: StageChannel(capacity: buffer, producers: 1),
            toChunk: StageChannel(capacity: buffer, producers: extractWorkers),
            toHash: StageChannel(capacity: buffer, producers: chunkWorkers),
            toEmbed: StageChannel(capacity: buffer, producers: chunkWorkers),
            toUpsert: StageChannel(capacity: buffer, producers: 1),
            toCommit: StageChannel(capacity: buffer, producers: upsertWorkers)
        )
    }
}
