import Foundation
import Logging
import SluiceCore
import SluiceState

extension Pipeline {
    /// A state directory belongs to one shard of one sharding (docs/DESIGN.md §8). Running it as another shard, or
    /// unsharded, would make prune delete the documents the state knows but this run no longer owns, while
    /// their owner upserts them into the same shared sink. Re-embedding clears the whole sink, under the
    /// other shards' feet, so it is refused with a shard too.
    func guardShard(checkpoint: CheckpointStore) throws {
        let shard = options.shard
        if options.reembed && shard.count > 1 {
            throw SluiceError(
                .usage,
                "--reembed cannot be combined with --shard: it clears the shared sink under the other shards. To change the embedder of a sharded deployment, point every shard at a new sink (table, collection, index) and new state directories, or re-embed in one unsharded run."
            )
        }
        let recorded = try checkpoint.metadata("shard") ?? Shard.whole.description
        if recorded != shard.description, try checkpoint.documentCount() > 0 {
            func describe(_ spec: String) -> String {
                spec == Shard.whole.description ? "the whole corpus (no --shard)" : "shard \(spec)"
            }
            throw SluiceError(
                .usage,
                "this state was built for \(describe(recorded)); this run is for \(describe(shard.description)). A state directory belongs to one shard of one sharding: give each shard its own state directory, and start new ones (with the same sink: vector ids do not change) to re-shard."
            )
        }
    }

    /// Refuses to mix vectors of two embedders in one sink, unless told to re-embed everything.
    func guardEmbedder(
        _ identity: EmbedderIdentity,
        checkpoint: CheckpointStore,
        stateExecutor: BlockingExecutor
    ) async throws {
        let stored = try checkpoint.metadata("embedder")
        if options.reembed {
            logger.warning(
                "re-embedding everything: the sink and the document checkpoint are cleared",
                metadata: ["sluice-embedder": "\(identity)"]
            )
            try await SinkReset.removeAll.perform(
                sink: components.sink,
                checkpoint: checkpoint,
                stateExecutor: stateExecutor,
                crashPoint: "reembed.midway"
            )
            return
        }
        try refuseEmbedderChange(identity, stored: stored, checkpoint: checkpoint)
    }

    /// Refuses an embedder other than the one the state's documents were embedded with (`stored`): what a
    /// run refuses without `--reembed`, and a dry run with it.
    func refuseEmbedderChange(_ identity: EmbedderIdentity, stored: String?, checkpoint: CheckpointStore) throws {
        if let stored, stored != identity.description, try checkpoint.documentCount() > 0 {
            throw SluiceError(
                .embedderMismatch,
                "this state was built with embedder \(stored), the pipeline now uses \(identity); vectors of two models must not mix in one sink. Run with --reembed to replace every vector, or use another state and sink."
                    + (configuration.generation.map {
                        " Generation \($0)'s embedder is fixed: build the new model as a candidate generation, `sluice generation start PIPELINE --set embed.…` (docs/GENERATIONS.md)."
                    }
                        ?? " To change the model while the index is served, build a candidate generation (docs/GENERATIONS.md).")
            )
        }
    }

    /// Full sync: deletes the vectors of documents that vanished from the source (or no longer match
    /// include/exclude). Stops before deleting anything if that is more than `run.max_delete_fraction`
    /// of the store, unless `--allow-mass-delete`.
    ///
    /// The source's listing must go to its end first (``DocumentSource/completeListing()``): one that fails
    /// halfway throws here, before anything is deleted.
    func prune(
        source: any DocumentSource,
        checkpoint: CheckpointStore,
        stateExecutor: BlockingExecutor,
        tally: RunTally
    ) async throws {
        let listing = try await source.completeListing()
        let plan = try planPrune(listing: listing, checkpoint: checkpoint)
        guard !plan.keys.isEmpty else { return }
        try checkMassDelete(deleting: plan.ids.count, documents: plan.keys.count, stored: plan.known)
        let keys = plan.keys
        // The records stop claiming the vectors before they go: a crash after the deletion leaves them
        // "being removed", so a file restored in between is processed again, never skipped.
        try await stateExecutor.run { try checkpoint.markRemoving(keys) }
        try await components.sink.delete(plan.ids, documentKeys: plan.documentKeys)
        CrashPoint.reach("prune.vectors-deleted")
        try await stateExecutor.run { try checkpoint.commit(put: [], delete: keys) }
        tally.update {
            $0.documentsPruned += plan.keys.count
            $0.vectorsDeleted += plan.ids.count
        }
        logger.info(
            "pruned vanished documents",
            metadata: ["sluice-documents": "\(plan.keys.count)", "sluice-vectors": "\(plan.ids.count)"]
        )
    }

    /// What prune would delete (with each id's document key, for stores that delete by key), and how many
    /// vectors this state tracks in all (the base of the mass-delete share: the sink may hold other shards'
    /// or other pipelines' vectors, which are not this run's to count).
    func planPrune(
        listing: SourceListing,
        checkpoint: CheckpointStore
    ) throws -> (keys: [String], ids: [VectorID], documentKeys: [VectorID: String], known: Int) {
        var keys: [String] = []
        var ids: [VectorID] = []
        var documentKeys: [VectorID: String] = [:]
        var known = 0
        try checkpoint.forEachDocument { record in
            known += record.knownIDs.count
            if !listing.lists(record.key) {
                keys.append(record.key)
                ids += record.knownIDs.sorted()
                for id in record.knownIDs { documentKeys[id] = record.key }
            }
        }
        return (keys, ids, documentKeys, known)
    }

    /// After a run without prune: documents the state knows that are no longer in the source keep their
    /// vectors (search still finds them); say so, and how `--prune` removes them. Looked for only when the
    /// state tracks more documents than the run reached (a count, then a stat per tracked document).
    func noteVanishedDocuments(
        source: any DocumentSource,
        checkpoint: CheckpointStore,
        reached stats: RunStats
    ) async {
        let reached = stats.documentsUpserted + stats.documentsSkipped + stats.documentsFailed
        // A hint after the run, not a read the run depends on: the run's own reads of the checkpoint stop it on
        // damage (``RecordRead``), so a read that fails here only leaves the hint out.
        guard let tracked = try? checkpoint.documentCount(), tracked > reached,
            let listing = try? await source.completeListing(),
            let plan = try? planPrune(listing: listing, checkpoint: checkpoint), !plan.keys.isEmpty
        else { return }
        let count = plan.keys.count
        let examples = plan.keys.prefix(3).map(DisplayEscaping.escaped).joined(separator: ", ")
        logger.notice(
            "\(count) document\(count == 1 ? " is" : "s are") no longer in the source (e.g. \(examples)); their \(plan.ids.count) vectors stay in the store and search still finds them: `sluice run --prune` removes them",
            metadata: ["sluice-vanished": "\(count)"]
        )
    }

    func checkMassDelete(deleting: Int, documents: Int, stored: Int) throws {
        guard !options.allowMassDelete, stored > 0 else { return }
        let fraction = Double(deleting) / Double(stored)
        if fraction > configuration.run.maxDeleteFraction {
            throw SluiceError(
                .massDelete,
                "pruning would delete \(deleting) of \(stored) vectors (\(Int((fraction * 100).rounded()))%, \(documents) documents), over run.max_delete_fraction (\(Int(configuration.run.maxDeleteFraction * 100))%). Nothing was deleted. Check that the source folder is mounted; pass --allow-mass-delete if this is intended."
            )
        }
    }
}
