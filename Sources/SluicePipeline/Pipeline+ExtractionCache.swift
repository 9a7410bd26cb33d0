import Logging
import SluiceCore
import SluiceEmbed
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
        // Captions made with the settings in effect are kept; those of another model or prompt go.
        let caption = configuration.extract.images.caption
        let live = Set(components.extractors.extractors.compactMap(\.cacheIdentity))
            .union(caption.enabled ? [ImageCaptioning.identity(caption)] : [])
        // The other generations' documents keep their entries: a candidate reads them when it reaches them.
        let others =
            try GenerationManifest.load(stateDirectory: stateDirectory)?.all.map(\.id)
            .filter { $0 != (configuration.generation ?? GenerationManifest.original) } ?? []
        // Pictures' captions are keyed by the picture, which no document record names: they stay while
        // their settings do (a picture recurs in other documents, and in a changed document's next version).
        let pictures: Set<ExtractorIdentity> =
            caption.enabled && caption.pictures.enabled ? [ImageCaptioning.identity(caption)] : []
        let removed = try await stateExecutor.run {
            try checkpoint.collectExtractions(
                live: live,
                capBytes: capBytes,
                generations: others,
                unreferenced: pictures
            )
        }
        if removed > 0 {
            logger.info("extraction cache collected", metadata: ["sluice-removed": "\(removed)"])
        }
    }
}

extension Pipeline {
    /// The vision model of `extract.images.caption`, or nil when captions are off.
    /// - Throws: ``SluiceError/Code/configuration`` for a bad base URL or an unset key variable.
    func makeCaptioner() throws -> ImageCaptioner? {
        let settings = configuration.extract.images.caption
        guard settings.enabled else { return nil }
        return try ImageCaptioner(settings: settings)
    }
}
