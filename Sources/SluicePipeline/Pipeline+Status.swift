import Foundation
import SluiceCore
import SluiceState

/// What `sluice status` shows: the state's documents by status, its caches, the last runs and the
/// failures with their reasons. Read without taking the state lock (a run may be going on).
public struct StateReport: Sendable {
    /// The state directory.
    public var stateDirectory: URL
    /// The embedder identity the state was written with (nil before the first run).
    public var embedder: String?
    /// A sink reset (drop or clear) that was interrupted; the next run completes it.
    public var pendingSinkReset: String?
    /// Documents by status (`indexed`, `failed`, …).
    public var documentsByStatus: [String: Int] = [:]
    /// Vector ids the checkpoint says the store holds.
    public var vectorsTracked = 0
    /// Entries of the embedding cache.
    public var embeddingCacheEntries = 0
    /// Entries and bytes of the extraction cache.
    public var extractionCacheEntries = 0
    public var extractionCacheBytes = 0
    /// The most recent runs, newest first.
    public var recentRuns: [RunRecord] = []
    /// The documents whose last attempt failed.
    public var failures: [DocumentRecord] = []
    /// Whether the state has a checkpoint. A state folder without one is a reader's (a `search` or `serve` on
    /// another machine that follows the store's generations, docs/OPERATIONS.md): no run has loaded with it, so
    /// it has no documents, caches or runs to report.
    public var hasCheckpoint = true
}

extension Pipeline {
    /// Reads the state of the pipeline `configuration` describes.
    /// - Parameter recentRuns: How many of the last runs to include.
    /// - Throws: ``SluiceError`` if the state cannot be opened or read.
    public static func status(configuration: PipelineConfiguration, recentRuns: Int) throws -> StateReport {
        let stateURL = configuration.resolve(configuration.state)
        var report = StateReport(stateDirectory: stateURL)
        // A reader's state folder (its generations manifest, no checkpoint); a folder that is not there at all
        // is still "no state" (a mistyped `--state`).
        if FileManager.default.fileExists(atPath: stateURL.path),
            !CheckpointStore.exists(at: stateURL)
        {
            report.hasCheckpoint = false
            return report
        }
        let checkpoint = try CheckpointStore(directory: stateURL, readOnly: true, generation: configuration.generation)
        try checkpoint.forEachDocument { record in
            report.documentsByStatus[record.status.rawValue, default: 0] += 1
            report.vectorsTracked += record.chunkIDs.count
            if record.status == .failed { report.failures.append(record) }
        }
        report.embedder = try checkpoint.metadata("embedder")
        report.pendingSinkReset = try checkpoint.pendingSinkReset()
        report.embeddingCacheEntries = try checkpoint.cacheCount()
        let extractions = try checkpoint.extractionCacheUsage()
        report.extractionCacheEntries = extractions.entries
        report.extractionCacheBytes = extractions.bytes
        report.recentRuns = try checkpoint.recentRuns(limit: recentRuns)
        return report
    }

    /// Removes the store's collection, table or files, and makes the checkpoint forget its documents
    /// (the embedding cache is kept), so that the next run loads everything again.
    ///
    /// Holds the state lock: a drop never races a run. The checkpoint forgets first (noting the pending
    /// drop), so a kill at any point converges: the next run or drop completes it.
    /// - Throws: ``SluiceError`` (lock held, state, the store's failure).
    public func dropSink() async throws {
        let lock = try StateLock(directory: stateDirectory)
        defer { withExtendedLifetime(lock) {} }
        let checkpoint = try CheckpointStore(directory: stateDirectory, generation: configuration.generation)
        let stateExecutor = BlockingExecutor(label: "sl-state", threads: 1)
        defer { stateExecutor.shutdown() }
        try await SinkReset.drop.perform(
            sink: components.sink,
            checkpoint: checkpoint,
            stateExecutor: stateExecutor,
            crashPoint: "sink-drop.midway"
        )
    }
}
