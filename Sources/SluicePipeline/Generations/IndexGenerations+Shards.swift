import Foundation
import SluiceCore
import SluiceState

/// Index generations in a sharded deployment (``ShardedGenerations``; docs/GENERATIONS.md, "Sharded
/// deployments"): every shard builds and keeps its part of the candidate, and the switch is one step.
extension IndexGenerations {
    /// The deployment's shared generations when this state's manifest links to them; nil for one state.
    var sharded: ShardedGenerations? {
        ShardedGenerations.isLinked(stateDirectory) ? ShardedGenerations(baseStore: baseStore) : nil
    }

    /// The shard this state's runs were made as (`--shard K/N` with N > 1); nil for an unsharded state or
    /// before its first run.
    func recordedShard() throws -> Shard? {
        guard FileManager.default.fileExists(atPath: stateDirectory.appendingPathComponent("data.mdb").path),
            let text = try CheckpointStore(directory: stateDirectory, readOnly: true).metadata("shard"),
            let shard = try? Shard(parsing: text), shard.count > 1
        else { return nil }
        return shard
    }

    /// Where a sharded deployment keeps its one manifest: beside the local store the shards share.
    /// - Throws: ``SluiceError/Code/configuration`` for another store (the shards' states would need a
    ///   folder they all reach).
    func shardedStore() throws -> ShardedGenerations {
        guard sinkKind == .local else {
            throw SluiceError(
                .configuration,
                "index generations of a sharded deployment work with the local store so far (sink.kind \(sinkKind): docs/GENERATIONS.md, \"Sharded deployments\")"
            )
        }
        return ShardedGenerations(baseStore: baseStore)
    }

    /// The locks a change takes: the state's, and the deployment's (exclusively: no shard is running).
    func lockForChange() throws -> [StateLock] {
        var locks = [try StateLock(directory: stateDirectory)]
        if let sharded { locks.append(try StateLock(directory: sharded.directory)) }
        return locks
    }

    /// Before a shard's run reads its configuration: links its state to the deployment's manifest when the
    /// store has one (a shard's first run after `sluice generation start` was run with another shard's state).
    /// - Parameter configuration: the pipeline file's settings (no generation applied).
    package static func joinDeployment(configuration: PipelineConfiguration, shard: Shard) throws {
        let generations = IndexGenerations(configuration: configuration)
        guard shard.count > 1, generations.sinkKind == .local else { return }
        let shared = ShardedGenerations(baseStore: generations.baseStore)
        guard FileManager.default.fileExists(atPath: shared.manifestURL.path) else { return }
        try shared.link(generations.stateDirectory)
    }

    /// What a shard's run holds while it runs: the deployment's lock, shared (changes wait for every shard's
    /// run to end); nil for an unsharded state.
    /// - Throws: ``SluiceError/Code/lockHeld`` while a change holds it.
    package func shardRunLock() throws -> StateLock? {
        guard let sharded else { return nil }
        return try StateLock(directory: sharded.directory, shared: true)
    }

    /// Before a shard's run touches either generation: its part of the candidate is marked incomplete (a run
    /// killed from here on leaves it so), and the document records of generations the manifest no longer names
    /// are dropped from its state (a change made with another shard's state dropped them only there).
    /// - Throws: ``SluiceError/Code/usage`` when the run's shard count is not the deployment's.
    package func beginShardRun(shard: Shard) throws {
        guard let sharded, let manifest = try manifest() else { return }
        if let shards = manifest.shards, shards != shard.count {
            throw SluiceError(
                .usage,
                "--shard \(shard): the deployment's generations have \(shards) shards (docs/GENERATIONS.md, \"Sharded deployments\")"
            )
        }
        if let candidate = manifest.candidate {
            try sharded.write(ShardedGenerations.Part(complete: false), of: candidate.id, shard: shard)
        }
        let named = Set(manifest.all.map(\.id))
        let unnamed = (0..<manifest.next).map { "g\($0)" }.filter { !named.contains($0) }
        guard !unnamed.isEmpty else { return }
        let checkpoint = try CheckpointStore(directory: stateDirectory)
        for generation in unnamed { try checkpoint.dropGeneration(generation) }
    }

    /// After a shard's run of both generations ended: its part of the candidate, as its document records
    /// show it (complete when every document of its active generation is indexed in the candidate from the
    /// same bytes, it holds no other, and no write is pending).
    package func endShardRun(shard: Shard) throws {
        guard let sharded, let manifest = try manifest(), let candidate = manifest.candidate else { return }
        let completeness = try Self.completeness(
            of: candidate.id,
            against: manifest.active.id,
            in: try CheckpointStore(directory: stateDirectory)
        )
        let part = ShardedGenerations.Part(
            complete: completeness.isComplete,
            missing: completeness.missing.count,
            extra: completeness.extra.count,
            pending: completeness.pending.count
        )
        try sharded.write(part, of: candidate.id, shard: shard)
    }
}
