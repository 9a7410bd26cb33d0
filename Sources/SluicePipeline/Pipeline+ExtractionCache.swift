import Logging
import SluiceCore
import SluiceExtract
import SluiceState

extension Pipeline {
    /// `extract.cache_mb` in bytes (0: the extraction cache is off).
    var extractionCacheBytes: Int { Int(configuration.extract.cacheMB * 1_048_576) }

    /// Garbage-collects the extraction cache at the end of a run (every document committed): entries whose
    /// content hash no document references any more (changed, pruned), or made with settings or code no
    /// extractor of this pipeline has now; everything when the cache is off. Skipped after a run that only
    /// skipped documents, so that a cron run with nothing to do stays a stat-only pass.
    func collectExtractions(
        checkpoint: CheckpointStore,
        stateExecutor: BlockingExecutor,
        after stats: RunStats
    ) async throws {
        let capBytes = extractionCacheBytes
        let changed = stats.documentsUpserted + stats.documentsFailed + stats.documentsPruned
        guard changed > 0 || capBytes == 0 else { return }
        let live = Set(components.extractors.extractors.compactMap(\.cacheIdentity))
        // The other generations' documents keep their entries: a candidate reads them when it reaches them.
        let others =
            try GenerationManifest.load(stateDirectory: stateDirectory)?.all.map(\.id)
            .filter { $0 != (configuration.generation ?? GenerationManifest.original) } ?? []
        let removed = try await stateExecutor.run {
            try checkpoint.collectExtractions(live: live, capBytes: capBytes, generations: others)
        }
        if removed > 0 {
            logger.info("extraction cache collected", metadata: ["sluice-removed": "\(removed)"])
        }
    }
}
