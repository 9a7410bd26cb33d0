import Foundation
import SluiceCore
import SluiceSinks
import SluiceState

/// Index generations in a sharded deployment (docs/GENERATIONS.md, "Sharded deployments"): every shard builds
/// and keeps its part of the candidate, and the switch is one step. The one manifest and the parts are kept
/// beside a local store (``ShardedGenerations``) or in a store behind a server (``StoreGenerationDeployment``).
extension IndexGenerations {
    /// The deployment's shared generations when this state's manifest links to them; nil for one state.
    var sharded: ShardedGenerations? {
        ShardedGenerations.isLinked(stateDirectory) ? ShardedGenerations(baseStore: baseStore) : nil
    }

    /// The deployment's records in its store, when this state's manifest is a copy of a deployment's (it
    /// names a shard count) and the store is behind a server; nil otherwise.
    func storeDeployment() throws -> StoreGenerationDeployment? {
        guard let remote, try manifest()?.shards != nil else { return nil }
        return try requiredStoreDeployment(remote)
    }

    /// The store's records of a sharded deployment's generations.
    /// - Throws: ``SluiceError/Code/configuration`` for a store that keeps none yet.
    func requiredStoreDeployment(_ remote: RemoteGenerationStore) throws -> StoreGenerationDeployment {
        guard let deployment = try StoreGenerationDeployment(remote) else {
            let reason =
                sinkKind == .pinecone
                ? "Pinecone has no conditional write to keep the deployment's one manifest with that a later read is documented to see (an upsert overwrites; a namespace create answers 409 when the name exists, but its atomicity is not documented, and Pinecone's reads are eventually consistent: its LSNs tell a writer when its own write is visible to queries, not a reader which of two racing writes won), so two shards' commands could each switch generations and neither would know. Name a coordination store that keeps it instead: generations.coordination (a PostgreSQL database, postgresql://user@host/db)"
                : "this store cannot keep the deployment's one manifest"
            throw SluiceError(
                .configuration,
                "index generations of a sharded deployment work with the local store, pgvector, Chroma, Qdrant, and Pinecone with a coordination store (sink.kind \(sinkKind): \(reason); docs/GENERATIONS.md, \"Sharded deployments\")"
            )
        }
        return deployment
    }

    /// Where this state's deployment keeps the shards' parts; nil for one state.
    func shardParts() throws -> (any GenerationParts)? {
        if let sharded { return sharded }
        return try storeDeployment()
    }

    /// The shard this state's runs were made as (`--shard K/N` with N > 1); nil for an unsharded state or
    /// before its first run.
    func recordedShard() throws -> Shard? {
        guard let text = try CheckpointStore.recordedSetting("shard", directory: stateDirectory),
            let shard = try? Shard(parsing: text), shard.count > 1
        else { return nil }
        return shard
    }

    /// Where a sharded deployment on a local store keeps its one manifest: beside the store the shards share.
    func shardedStore() throws -> ShardedGenerations {
        ShardedGenerations(baseStore: baseStore)
    }

    /// What a change holds: the state's lock, and the deployment's (exclusively: no shard is running) with
    /// the version of the store's manifest it read under it.
    struct ChangeHold {
        var locks: [StateLock]
        var deploymentLock: (any DeploymentLockHold)?
        var deployment: StoreGenerationDeployment?
        var version = 0
    }

    /// Takes the locks a change takes; for a deployment in a store, brings this state's copy of the
    /// manifest in line with the store's under the deployment's lock.
    func beginChange() async throws -> ChangeHold {
        var hold = ChangeHold(locks: [try StateLock(directory: stateDirectory)])
        if let sharded { hold.locks.append(try StateLock(directory: sharded.directory)) }
        try await followStore(holdingLock: true)
        if let deployment = try storeDeployment() {
            hold.deploymentLock = try await deployment.lock(shared: false)
            hold.deployment = deployment
            if let shared = try await deployment.manifest() {
                try copy(shared.manifest)
                hold.version = shared.version
            }
        }
        return hold
    }

    /// Writes a changed manifest: to the store first (conditionally on the version the change read), then
    /// this state's copy (a process killed between the two leaves the copy behind, and the next command
    /// brings it in line); for one state or a local store, the state's `generations.json` (or the file it
    /// links to).
    func save(_ changed: GenerationManifest, _ hold: inout ChangeHold) async throws {
        // Counted, so that a copy of it is never taken for later than it (``GenerationManifest/isLater(than:)``).
        var manifest = changed
        manifest.changes = (manifest.changes ?? 0) + 1
        if let deployment = hold.deployment {
            // A test holds a change here, after it read the store's manifest, to race another change.
            DebugPause.at("CHANGE", path: stateDirectory.path)
            try await deployment.save(manifest, expecting: hold.version)
            hold.version += 1
        }
        try manifest.save(stateDirectory: stateDirectory)
        // One state: the copy kept with the store, which a new state follows. The change is made once the
        // state's manifest is: a copy that cannot be written now is written by the next run or change.
        if hold.deployment == nil { try? await writeStoreCopy(manifest) }
    }

    /// Writes `manifest` as this state's copy unless it is the same.
    func copy(_ manifest: GenerationManifest) throws {
        guard try self.manifest() != manifest else { return }
        try FileManager.default.createDirectory(at: stateDirectory, withIntermediateDirectories: true)
        try manifest.save(stateDirectory: stateDirectory)
    }

    /// Brings this state's copy of its deployment's manifest in line with the one the store keeps (a change
    /// made with another shard's state, on another machine): before a command reads it. Beside a local store,
    /// a shard's state that has not run since `generation start` is linked to the deployment's manifest.
    /// On a store behind a server, one state's (or a reader's) follows the store's copy of one state's manifest
    /// (``followStoreRecordCopy(over:)``) unless `storeCopy` is false.
    package func followDeployment(storeCopy: Bool = true) async throws {
        let local: GenerationManifest?
        do {
            local = try manifest()
        } catch {
            // A copy that cannot be read is left as it is: the command reading it says so.
            return
        }
        guard let remote else {
            try followStoreCopy()
            // A state that cannot be read is left as it is too: `serve` reports it on /ready, a run refuses it.
            guard sinkKind == .local, !ShardedGenerations.isLinked(stateDirectory), local == nil,
                (try? recordedShard()) != nil
            else { return }
            let shared = ShardedGenerations(baseStore: baseStore)
            guard FileManager.default.fileExists(atPath: shared.manifestURL.path) else { return }
            return try shared.link(stateDirectory)
        }
        // JSONL's files are written by one process (no sharded deployments): its copy is a file beside them.
        if sinkKind == .jsonl { return try followStoreCopy() }
        if let local {
            guard local.shards != nil else { return storeCopy ? try await followStoreRecordCopy(over: local) : () }
        } else {
            guard (try? recordedShard()) != nil else {
                return storeCopy ? try await followStoreRecordCopy(over: nil) : ()
            }
        }
        guard let deployment = try StoreGenerationDeployment(remote), let shared = try await deployment.manifest()
        else { return }
        try copy(shared.manifest)
    }

    /// Before a shard's run reads its configuration: joins the deployment's one manifest when there is one
    /// (a shard's first run after `sluice generation start` was run with another shard's state): links its
    /// state to it beside a local store, or copies it from a store behind a server.
    /// - Parameter configuration: the pipeline file's settings (no generation applied).
    /// - Throws: ``SluiceError/Code/configuration`` when the state has generations of its own.
    package static func joinDeployment(configuration: PipelineConfiguration, shard: Shard) async throws {
        let generations = IndexGenerations(configuration: configuration)
        guard shard.count > 1 else { return }
        // A new shard's state beside a store whose generations one state changed last (that state's runs moved
        // to shards): the deployment's one manifest is made from the store's copy of that state's, so that every
        // shard follows its active generation (and adopts its vectors) instead of the pipeline file's, or the
        // deployment's as it was before its shards moved to that one state.
        let isNew = try generations.manifest() == nil
        if let remote = generations.remote {
            guard let deployment = try StoreGenerationDeployment(remote) else { return }
            let current = try await deployment.manifest()
            if isNew,
                let first = try generations.deploymentManifest(
                    fromStoreCopy: try await deployment.stateCopy(),
                    over: current?.manifest,
                    shards: shard.count
                )
            {
                do {
                    try await deployment.save(first, expecting: current?.version ?? 0)
                    if current != nil { try await deployment.removeParts() }
                } catch let error as SluiceError where error.code == .lockHeld {
                    // Another shard's run made it first: theirs is read below.
                }
            }
            guard let shared = try await deployment.manifest()?.manifest else { return }
            if let local = try generations.manifest(), local.shards == nil {
                throw SluiceError(
                    .configuration,
                    "\(generations.stateDirectory.appendingPathComponent(GenerationManifest.fileName).path) is a manifest of its own, but the store's shards share one: this state's generations are not the deployment's (docs/GENERATIONS.md, \"Sharded deployments\")"
                )
            }
            return try generations.copy(shared)
        }
        guard generations.sinkKind == .local else { return }
        let shared = ShardedGenerations(baseStore: generations.baseStore)
        let current = (try? GenerationManifest.load(from: shared.manifestURL)) ?? nil
        if isNew,
            let first = try generations.deploymentManifest(
                fromStoreCopy: generations.fileStoreCopy,
                over: current,
                shards: shard.count
            )
        {
            try shared.place(first, replacing: current != nil)
        }
        guard FileManager.default.fileExists(atPath: shared.manifestURL.path) else { return }
        try shared.link(generations.stateDirectory)
    }

    /// What a shard's run holds while it runs: the deployment's lock, shared (changes wait for every shard's
    /// run to end); nil for an unsharded state. For a deployment in a store, the state's copy of the manifest
    /// is brought in line once the lock is held.
    /// - Throws: ``SluiceError/Code/lockHeld`` while a change holds it.
    package func shardRunLock() async throws -> DeploymentRunLock? {
        if let sharded { return DeploymentRunLock(local: try StateLock(directory: sharded.directory, shared: true)) }
        guard let deployment = try storeDeployment() else { return nil }
        let lock = DeploymentRunLock(remote: try await deployment.lock(shared: true))
        if let shared = try await deployment.manifest() { try copy(shared.manifest) }
        return lock
    }

    /// Before a shard's run touches either generation: its part of the candidate is marked incomplete (a run
    /// killed from here on leaves it so), and the document records of generations the manifest no longer names
    /// are dropped from its state (a change made with another shard's state dropped them only there).
    /// - Returns: for a deployment whose manifest is kept in its store, the version of the manifest record
    ///   the run goes on from (its part is tagged with it: ``GenerationManifest/partsSince``); nil otherwise.
    /// - Throws: ``SluiceError/Code/usage`` when the run's shard count is not the deployment's.
    @discardableResult
    package func beginShardRun(shard: Shard) async throws -> Int? {
        guard let parts = try shardParts() else { return nil }
        var version: Int?
        if let deployment = parts as? StoreGenerationDeployment, let shared = try await deployment.manifest() {
            // Read again: on a store without the deployment's lock a change may have been made since the
            // run's start.
            try copy(shared.manifest)
            version = shared.version
        }
        guard let manifest = try manifest() else { return version }
        if let shards = manifest.shards, shards != shard.count {
            throw SluiceError(
                .usage,
                "--shard \(shard): the deployment's generations have \(shards) shards (docs/GENERATIONS.md, \"Sharded deployments\")"
            )
        }
        if let candidate = manifest.candidate {
            try await parts.write(
                ShardedGenerations.Part(complete: false, version: version),
                of: candidate.id,
                shard: shard
            )
        }
        let named = Set(manifest.all.map(\.id))
        let unnamed = (0..<manifest.next).map { "g\($0)" }.filter { !named.contains($0) }
        guard !unnamed.isEmpty else { return version }
        let checkpoint = try CheckpointStore(directory: stateDirectory)
        for generation in unnamed { try checkpoint.dropGeneration(generation) }
        return version
    }

    /// Before a shard's run builds the candidate, for a deployment whose manifest is kept in a store without
    /// the deployment's lock: whether the candidate it began with (`candidate`, at manifest version
    /// `version`) is still the one to build. False when a change made meanwhile (with another shard's
    /// state) promoted, dropped or restarted it: the run then leaves it alone (its part would not count).
    /// True for every other deployment (its lock keeps changes out while the run holds it).
    package func candidateStillCurrent(_ candidate: String, since version: Int?) async throws -> Bool {
        guard version != nil, let deployment = try shardParts() as? StoreGenerationDeployment,
            let shared = try await deployment.manifest()
        else { return true }
        try copy(shared.manifest)
        guard shared.manifest.candidate?.id == candidate else { return false }
        return (shared.manifest.partsSince ?? 0) <= (version ?? 0)
    }

    /// After a shard's run of both generations ended: its part of the candidate, as its document records
    /// show it (complete when every document of its active generation is indexed in the candidate from the
    /// same bytes, it holds no other, and no write is pending), with the candidate's documents and vectors.
    /// - Parameter version: what ``beginShardRun(shard:)`` returned: the part is tagged with it.
    package func endShardRun(shard: Shard, version: Int? = nil) async throws {
        guard let parts = try shardParts(), let manifest = try manifest(), let candidate = manifest.candidate
        else { return }
        let checkpoint = try CheckpointStore(directory: stateDirectory)
        let completeness = try Self.completeness(of: candidate.id, against: manifest.active.id, in: checkpoint)
        var documents = 0
        var vectors = 0
        try checkpoint.forEachDocument(ofGeneration: candidate.id) { record in
            guard record.status == .indexed else { return }
            documents += 1
            vectors += record.chunkIDs.count
        }
        let part = ShardedGenerations.Part(
            complete: completeness.isComplete,
            missing: completeness.missing.count,
            extra: completeness.extra.count,
            pending: completeness.pending.count,
            documents: documents,
            vectors: vectors,
            version: version
        )
        try await parts.write(part, of: candidate.id, shard: shard)
    }
}

/// The deployment's lock a shard's run holds, shared, while it runs (released when the value goes).
package final class DeploymentRunLock: Sendable {
    let local: StateLock?
    let remote: (any DeploymentLockHold)?

    init(local: StateLock? = nil, remote: (any DeploymentLockHold)? = nil) {
        self.local = local
        self.remote = remote
    }
}
