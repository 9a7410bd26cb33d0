import Foundation
import SluiceCore
import SluiceState

/// The index generations of one pipeline (docs/GENERATIONS.md): which generation a command reads and
/// writes, and the changes `sluice generation start|promote|rollback|drop` make. Every change takes the
/// state lock (never beside a run) and ends with one atomic write of the manifest
/// (``GenerationManifest/save(stateDirectory:)``); what is deleted is deleted after it, so a process killed
/// at any point leaves the old generations or the new ones in force, and at most files no generation
/// names, which the next change deletes.
package struct IndexGenerations: Sendable {
    /// Which generation a command uses.
    package enum Role: Sendable {
        case active, candidate
    }

    /// The state folder, where the manifest is.
    package let stateDirectory: URL
    /// The pipeline file's store folder: the original generation's store, and the parent of the others'.
    package let baseStore: URL
    /// The store's kind: the local store and those of ``RemoteGenerationStore`` have generations.
    let sinkKind: PipelineConfiguration.Sink.Kind
    /// A store behind a server: a table or collection per generation, and the stable name outside readers
    /// follow; nil for the local store (a folder per generation) and the stores without generations.
    let remote: RemoteGenerationStore?

    /// - Parameter configuration: the pipeline file's settings (with the command line's), or a
    ///   generation's (``apply(_:to:)``: its store folder is then under the pipeline file's).
    package init(configuration: PipelineConfiguration) {
        stateDirectory = configuration.resolve(configuration.state)
        let store = configuration.resolve(configuration.sink.path)
        if let generation = configuration.generation, generation != GenerationManifest.original {
            baseStore = store.deletingLastPathComponent().deletingLastPathComponent()
        } else {
            baseStore = store
        }
        sinkKind = configuration.sink.kind
        remote = RemoteGenerationStore(configuration: configuration)
    }

    /// The manifest, or nil when generations were never used.
    package func manifest() throws -> GenerationManifest? {
        try GenerationManifest.load(stateDirectory: stateDirectory)
    }

    /// The folder of a generation's local store: `sink.path` for the original one, `sink.path/generations/gN`
    /// for the others.
    package func storeDirectory(_ generation: String) -> URL {
        generation == GenerationManifest.original
            ? baseStore : baseStore.appendingPathComponent("generations").appendingPathComponent(generation)
    }

    /// The generation `role` names in `manifest`.
    /// - Throws: ``SluiceError/Code/usage`` for the candidate when there is none.
    package static func generation(
        _ role: Role,
        in manifest: GenerationManifest
    ) throws -> GenerationManifest.Generation {
        switch role {
        case .active: return manifest.active
        case .candidate:
            guard let candidate = manifest.candidate else {
                throw SluiceError(.usage, "there is no candidate generation: start one with `sluice generation start`")
            }
            return candidate
        }
    }

    /// The settings of the generation `role` names: `load(extra)` loads the pipeline file with `extra`
    /// overrides before the command line's. Without generations, the active one is `base` itself.
    /// - Throws: ``SluiceError/Code/usage`` for a candidate when there is none.
    package static func configuration(
        _ role: Role,
        base: PipelineConfiguration,
        load: ([String]) throws -> PipelineConfiguration
    ) throws -> PipelineConfiguration {
        let generations = IndexGenerations(configuration: base)
        guard let manifest = try generations.manifest() else {
            if role == .active { return base }
            throw SluiceError(.usage, "there is no candidate generation: start one with `sluice generation start`")
        }
        return try generations.configuration(of: try Self.generation(role, in: manifest), base: base, load: load)
    }

    /// The name of the generation `configuration` reads (`g0` without generations).
    package static func id(of configuration: PipelineConfiguration) -> String {
        configuration.generation ?? GenerationManifest.original
    }

    /// Whether a candidate generation exists (every run then keeps it current too).
    package func hasCandidate() throws -> Bool { try manifest()?.candidate != nil }

    /// Points `configuration` (loaded with the generation's overrides) at the generation's store (its
    /// folder, table or collection) and document records.
    package func apply(
        _ generation: GenerationManifest.Generation,
        to configuration: inout PipelineConfiguration
    ) throws {
        try requireGenerations()
        configuration.generation = generation.id
        if let remote {
            remote.point(&configuration, at: generation.id)
        } else {
            configuration.sink.path = storeDirectory(generation.id).path
        }
    }

    /// Where a generation's vectors are, as `sluice generation status` shows it: its folder, table or
    /// collection.
    package func storeLocation(_ generation: String) -> String {
        remote?.location(of: generation) ?? storeDirectory(generation).path
    }

    func requireGenerations() throws {
        guard sinkKind == .local || remote != nil else {
            throw SluiceError(
                .configuration,
                "index generations work with the local, JSONL, pgvector, Qdrant, Chroma and Pinecone stores so far (sink.kind \(sinkKind) has none yet: docs/GENERATIONS.md)"
            )
        }
    }

    /// Makes the name outside readers query (pgvector's view, Qdrant's alias) show the active generation,
    /// when the manifest names one and the store has such a name: after each change, and after each run
    /// (which repairs a change killed between the manifest's write and the switch, and names the active
    /// generation's table once its first run created it).
    /// Done under the state lock, so that no change moves the manifest meanwhile; skipped while another
    /// process holds it (a change publishes itself, and a run publishes after it).
    package func publishActive() async throws {
        guard let remote, FileManager.default.fileExists(atPath: stateDirectory.path) else { return }
        guard let lock = try StateLock.unlessHeld(directory: stateDirectory) else { return }
        defer { withExtendedLifetime(lock) {} }
        // A shard's copy of a manifest kept in the store, as the store has it now (on Chroma and Qdrant a
        // change may have been made while this shard ran): never points the alias back at an old generation.
        // (One state's followed the store's copy before its run or change, and a change cannot be made meanwhile.)
        try await followDeployment(storeCopy: false)
        guard let manifest = try manifest() else { return }
        try await remote.publish(active: manifest.active.id)
    }

    /// Whether a `key=value` override is of a setting that changes vectors (`embed.*`, `chunk.*`): one a
    /// generation may change.
    package static func changesVectors(_ override: String) -> Bool {
        let key = override.split(separator: "=", maxSplits: 1).first.map(String.init) ?? override
        return GenerationManifest.overridablePrefixes.contains { key.hasPrefix($0) }
    }

    /// Refuses overrides that do not change vectors (only `embed.*` and `chunk.*` may differ between
    /// generations: the source, the extraction and the store are the index's).
    package static func validate(overrides: [String]) throws {
        for override in overrides {
            let key = override.split(separator: "=", maxSplits: 1).first.map(String.init) ?? override
            guard GenerationManifest.overridablePrefixes.contains(where: { key.hasPrefix($0) }) else {
                throw SluiceError(
                    .usage,
                    "--set \(key): a generation may change only the settings that change vectors (embed.*, chunk.*)"
                )
            }
        }
    }

    // MARK: Changes

    /// Starts a candidate with the active generation's overrides and `overrides` after them.
    /// - Returns: the candidate's name.
    /// - Throws: ``SluiceError/Code/usage`` when a candidate exists or an override is not allowed,
    ///   ``SluiceError/Code/lockHeld`` while a run holds the state.
    package func start(overrides: [String]) async throws -> String {
        try requireGenerations()
        try Self.validate(overrides: overrides)
        try FileManager.default.createDirectory(at: stateDirectory, withIntermediateDirectories: true)
        var hold = ChangeHold(locks: [try StateLock(directory: stateDirectory)])
        defer { withExtendedLifetime(hold) {} }
        // A shard's state (its runs used `--shard K/N`): the deployment's one manifest, beside a local store
        // or in a store behind a server.
        let shard = try recordedShard()
        if shard != nil, let remote {
            let deployment = try requiredStoreDeployment(remote)
            hold.deploymentLock = try await deployment.lock(shared: false)
            hold.deployment = deployment
            if let shared = try await deployment.manifest() {
                if let local = try manifest(), local.shards == nil {
                    throw SluiceError(
                        .configuration,
                        "\(stateDirectory.appendingPathComponent(GenerationManifest.fileName).path) is a manifest of its own, but the store's shards share one: this state's generations are not the deployment's (docs/GENERATIONS.md, \"Sharded deployments\")"
                    )
                }
                try copy(shared.manifest)
                hold.version = shared.version
            }
        } else if shard == nil {
            // A new state beside a store whose generations were changed: the next name is the store's.
            try await followStore(holdingLock: true)
        } else {
            let shared = try shardedStore()
            try FileManager.default.createDirectory(at: shared.directory, withIntermediateDirectories: true)
            hold.locks.append(try StateLock(directory: shared.directory))
            try shared.link(stateDirectory)
        }
        var manifest = try manifest() ?? GenerationManifest()
        if let shard {
            // Without a candidate the deployment may have been re-sharded (every shard a new state: its runs
            // follow the active generation): the candidate is built by this state's shard count. With one,
            // the count is the candidate's (refused below, with the count named here).
            if let shards = manifest.shards, shards != shard.count, manifest.candidate != nil {
                throw SluiceError(
                    .usage,
                    "this state is shard \(shard) but the deployment's generations have \(shards) shards (docs/GENERATIONS.md, \"Sharded deployments\")"
                )
            }
            manifest.shards = shard.count
        }
        if let candidate = manifest.candidate {
            throw SluiceError(
                .usage,
                "candidate generation \(candidate.id) exists: build it with `sluice run`, then promote or drop it"
            )
        }
        let candidate = GenerationManifest.Generation(
            id: "g\(manifest.next)",
            overrides: manifest.active.overrides + overrides
        )
        // A name the store refuses (too long) is refused before anything is written.
        _ = try remote?.sink(of: candidate.id)
        manifest.candidate = candidate
        manifest.next += 1
        // Parts count from the version this change writes (a store's manifest record).
        manifest.partsSince = hold.deployment == nil ? nil : hold.version + 1
        try await save(manifest, &hold)
        try await remote?.publish(active: manifest.active.id)
        try await collectUnnamed(manifest)
        return candidate.id
    }

    /// What a promote found: whether the candidate has every document of the active generation, indexed
    /// from the same bytes.
    package struct Completeness: Sendable, Hashable {
        /// Documents indexed in the active generation and not (or from other bytes) in the candidate.
        package var missing: [String] = []
        /// Documents the candidate holds and the active generation does not.
        package var extra: [String] = []
        /// Documents of the candidate with a write not yet confirmed (an interrupted run).
        package var pending: [String] = []

        package var isComplete: Bool { missing.isEmpty && extra.isEmpty && pending.isEmpty }

        var summary: String {
            [
                missing.isEmpty ? nil : "\(missing.count) document(s) not yet indexed in it (\(Self.some(missing)))",
                extra.isEmpty
                    ? nil : "\(extra.count) it holds that the active generation does not (\(Self.some(extra)))",
                pending.isEmpty ? nil : "\(pending.count) with an unconfirmed write (\(Self.some(pending)))",
            ].compactMap { $0 }.joined(separator: ", ")
        }

        private static func some(_ keys: [String]) -> String {
            keys.prefix(3).joined(separator: ", ") + (keys.count > 3 ? ", …" : "")
        }
    }

    /// Compares the candidate's document records with the active generation's.
    package static func completeness(
        of candidate: String,
        against active: String,
        in checkpoint: CheckpointStore
    ) throws -> Completeness {
        var indexed: [String: ContentHash?] = [:]
        var known = Set<String>()
        try checkpoint.forEachDocument(ofGeneration: active) { record in
            known.insert(record.key)
            if record.status == .indexed { indexed[record.key] = record.contentHash }
        }
        var result = Completeness()
        var reached = Set<String>()
        try checkpoint.forEachDocument(ofGeneration: candidate) { record in
            if !known.contains(record.key) { result.extra.append(record.key) }
            if !record.pendingIDs.isEmpty { result.pending.append(record.key) }
            if record.status == .indexed, let hash = indexed[record.key], hash == record.contentHash {
                reached.insert(record.key)
            }
        }
        result.missing = indexed.keys.filter { !reached.contains($0) }.sorted()
        return result
    }

    /// What a promote did.
    package struct Promotion: Sendable, Hashable {
        /// The generation now active (the candidate) and the one kept for a rollback.
        package var active: String
        package var previous: String
        /// The quality gate's comparison; nil when promoted without one (no gate given).
        package var comparison: GenerationComparison?
    }

    /// Makes the candidate the active generation, keeping the active one as the previous (for a rollback)
    /// and deleting the one kept before it.
    ///
    /// With a `gate`, a complete candidate is first compared with the active generation (under the state
    /// lock, so no run changes either meanwhile): the comparison is kept in the manifest, and a candidate
    /// that does not reach the bar is refused, the generations unchanged.
    /// - Parameter gate: Scores the active generation and the candidate (``compare(active:candidate:gate:base:load:)``).
    /// - Returns: the generations now active and kept as the previous, and the comparison.
    /// - Throws: ``SluiceError/Code/promoteRefused`` (exit 8) when the candidate is incomplete or below the
    ///   gate's bar: no generation changed; ``SluiceError/Code/usage`` when there is no candidate; what
    ///   `gate` throws (nothing changed).
    package func promote(
        gate: (
            (_ active: GenerationManifest.Generation, _ candidate: GenerationManifest.Generation) async throws ->
                GenerationComparison
        )? = nil
    ) async throws -> Promotion {
        try requireGenerations()
        var hold = try await beginChange()
        defer { withExtendedLifetime(hold) {} }
        guard var manifest = try manifest() else {
            throw SluiceError(.usage, "there is no candidate generation: start one with `sluice generation start`")
        }
        let candidate = try Self.generation(.candidate, in: manifest)
        let parts = try shardParts()
        if let parts, let shards = manifest.shards {
            // Every shard's part, as its last run left it (a shard's run holds the lock shared: none is running).
            // (Chroma, Qdrant: no lock, but a running shard's part is incomplete from its run's start, and a
            // part built before the candidate was last made, as before a rollback, does not count.)
            let incomplete = try await parts.incompleteShards(
                of: candidate.id,
                count: shards,
                since: manifest.partsSince
            )
            guard incomplete.isEmpty else {
                throw SluiceError(
                    .promoteRefused,
                    "candidate generation \(candidate.id) is incomplete: the part of shard "
                        + incomplete.map { "\($0)/\(shards)" }.joined(separator: ", ")
                        + " is not built yet (or its last run did not end); run `sluice run --shard K/N` of each until it ends with exit 0, then promote (nothing changed)"
                )
            }
        }
        // One state's document records; a sharded deployment's are the parts above.
        var completeness = Completeness()
        if parts == nil {
            completeness = try withCheckpoint { checkpoint in
                try Self.completeness(of: candidate.id, against: manifest.active.id, in: checkpoint)
            }
        }
        guard completeness.isComplete else {
            throw SluiceError(
                .promoteRefused,
                "candidate generation \(candidate.id) is incomplete: \(completeness.summary); run `sluice run` until it ends with exit 0, then promote (nothing changed)"
            )
        }
        let stored =
            try await remote?.exists(candidate.id)
            ?? FileManager.default.fileExists(
                atPath: storeDirectory(candidate.id).appendingPathComponent("data.mdb").path
            )
        guard stored else {
            throw SluiceError(
                .promoteRefused,
                "candidate generation \(candidate.id) has no store yet: run `sluice run` first (nothing changed)"
            )
        }
        var comparison: GenerationComparison?
        if let gate {
            let compared = try await gate(manifest.active, candidate)
            comparison = compared
            manifest.comparison = compared
            guard compared.passed else {
                // Kept for `sluice generation status`; the generations are as they were.
                try await save(manifest, &hold)
                throw SluiceError(
                    .promoteRefused,
                    "candidate generation \(candidate.id) is below the bar: its nDCG@\(compared.k) is "
                        + "\(GenerationComparison.figure(compared.candidateNDCG)), below \(compared.bar) "
                        + "(\(compared.configuration), \(compared.queries) queries of \(compared.queryFile)); nothing changed: "
                        + "the active generation stays. Drop the candidate, or promote it anyway with --skip-eval"
                )
            }
        }
        CrashPoint.reach("generations.promote-checked")
        manifest.previous = manifest.active
        manifest.active = candidate
        manifest.candidate = nil
        manifest.switchedAt = Date().timeIntervalSince1970
        try await save(manifest, &hold)
        try await parts?.removeParts()
        // Sluice's readers switched with the rename; outside readers switch with the view or alias.
        try await remote?.publish(active: candidate.id)
        try await collectUnnamed(manifest)
        return Promotion(active: candidate.id, previous: manifest.previous?.id ?? "", comparison: comparison)
    }

    /// Makes the previous generation active again, as it was (the next run brings it up to date); the
    /// generation it replaces becomes the candidate, kept current by runs, to promote again or drop.
    /// - Returns: the generations now active and candidate.
    /// - Throws: ``SluiceError/Code/usage`` when no previous generation is kept or a candidate exists.
    package func rollback() async throws -> (active: String, candidate: String) {
        try requireGenerations()
        var hold = try await beginChange()
        defer { withExtendedLifetime(hold) {} }
        guard var manifest = try manifest(), let previous = manifest.previous else {
            throw SluiceError(.usage, "there is no previous generation to roll back to")
        }
        if let candidate = manifest.candidate {
            throw SluiceError(
                .usage,
                "candidate generation \(candidate.id) exists: drop it first (`sluice generation drop`), then roll back"
            )
        }
        manifest.candidate = manifest.active
        manifest.active = previous
        manifest.previous = nil
        manifest.partsSince = hold.deployment == nil ? nil : hold.version + 1
        manifest.switchedAt = Date().timeIntervalSince1970
        try await save(manifest, &hold)
        // The candidate's parts are built again by every shard's next run.
        try await shardParts()?.removeParts()
        try await remote?.publish(active: previous.id)
        return (previous.id, manifest.candidate?.id ?? "")
    }

    /// Deletes the candidate (or, with `previous`, the generation kept for a rollback): its store and its
    /// document records.
    /// - Returns: the name of the generation deleted.
    package func drop(previous: Bool) async throws -> String {
        try requireGenerations()
        var hold = try await beginChange()
        defer { withExtendedLifetime(hold) {} }
        guard var manifest = try manifest(), let dropped = previous ? manifest.previous : manifest.candidate else {
            throw SluiceError(.usage, "there is no \(previous ? "previous" : "candidate") generation to drop")
        }
        // A server may still read the generation switched away from (it follows a switch within a second,
        // and finishes what it began): its store is not deleted before the grace after the switch is over
        // (session 47's campaign: a promote then an immediate drop of the previous generation failed
        // searches with "relation does not exist" and emptied document listings).
        if let switched = manifest.switchedAt {
            let wait = switched + GenerationManifest.followGrace - Date().timeIntervalSince1970
            if wait > 0 {
                try await Task.sleep(for: .milliseconds(Int64(min(wait, GenerationManifest.followGrace) * 1000)))
            }
        }
        if previous { manifest.previous = nil } else { manifest.candidate = nil }
        try await save(manifest, &hold)
        if !previous { try await shardParts()?.removeParts() }
        // The stable name never shows a generation about to be deleted (a change killed before its switch).
        try await remote?.publish(active: manifest.active.id)
        try await collectUnnamed(manifest)
        return dropped.id
    }

    /// Deletes the stores and document records of generations the manifest no longer names (dropped, or
    /// left by a change killed after the manifest's write).
    func collectUnnamed(_ manifest: GenerationManifest) async throws {
        let named = Set(manifest.all.map(\.id))
        if let remote {
            // Every generation ever started is g0…g(next-1): those not named are deleted (again: deleting a
            // table or collection that is gone is a no-op, so a change killed half-way is finished here).
            let unnamed = (0..<manifest.next).map { "g\($0)" }.filter { !named.contains($0) }
            guard !unnamed.isEmpty else { return }
            try withCheckpoint { checkpoint in
                for generation in unnamed { try checkpoint.dropGeneration(generation) }
            }
            for generation in unnamed {
                CrashPoint.reach("generations.collect")
                try await remote.delete([generation])
            }
            return
        }
        let folder = baseStore.appendingPathComponent("generations")
        let existing = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        var unnamed = existing.filter { !named.contains($0) && $0.hasPrefix("g") }
        // The original generation's files are the base folder's own (never its `generations` folder).
        if !named.contains(GenerationManifest.original),
            FileManager.default.fileExists(atPath: baseStore.appendingPathComponent("data.mdb").path)
        {
            unnamed.append(GenerationManifest.original)
        }
        guard !unnamed.isEmpty else { return }
        try withCheckpoint { checkpoint in
            for generation in unnamed { try checkpoint.dropGeneration(generation) }
        }
        for generation in unnamed {
            CrashPoint.reach("generations.collect")
            if generation == GenerationManifest.original {
                for item in try FileManager.default.contentsOfDirectory(atPath: baseStore.path)
                where item != "generations" {
                    try FileManager.default.removeItem(at: baseStore.appendingPathComponent(item))
                }
            } else {
                try FileManager.default.removeItem(at: folder.appendingPathComponent(generation))
            }
        }
    }

    private func withCheckpoint<T>(_ body: (CheckpointStore) throws -> T) throws -> T {
        try body(try CheckpointStore(directory: stateDirectory))
    }
}
