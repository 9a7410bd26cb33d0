import Foundation
import SluiceCore
import SluiceState

/// The copy of one state's generation manifest kept with the store (docs/GENERATIONS.md, "How it is
/// stored"): a new state beside the store — the old one lost or deleted, a new machine — follows the index's
/// generations from it rather than going back to the pipeline file's settings (session 47's campaign: such a
/// run rebuilt the index from scratch, orphaned the promoted generation's store and reused its name).
///
/// - The local store keeps it as the file `<store>/generations/manifest.json`.
/// - A store behind a server that keeps a sharded deployment's records (pgvector's `<table>_generations`,
///   Chroma's and Qdrant's `<collection>_generations`, Pinecone's coordination store) keeps it as the record
///   ``StoreGenerationDeployment/stateCopyKey``.
///
/// Every change writes it after the state's manifest; a change killed between the two leaves it behind, and
/// the next run or change of that state writes it again. A sharded deployment's one manifest is kept with the
/// store already (``ShardedGenerations``, ``StoreGenerationDeployment``): its states keep no copy.
extension IndexGenerations {
    /// `<store>/generations/manifest.json` (the local store).
    var storeCopyURL: URL { baseStore.appendingPathComponent("generations").appendingPathComponent("manifest.json") }

    /// Whether `manifest` is one state's (not a sharded deployment's).
    func isOneState(_ manifest: GenerationManifest) -> Bool {
        manifest.shards == nil && !ShardedGenerations.isLinked(stateDirectory)
    }

    /// The store's records, where it keeps them (a store behind a server); nil otherwise.
    private func storeRecords() throws -> StoreGenerationDeployment? {
        guard let remote else { return nil }
        return try StoreGenerationDeployment(remote)
    }

    /// Writes the store's copy of one state's `manifest` when it differs.
    func writeStoreCopy(_ manifest: GenerationManifest) async throws {
        guard isOneState(manifest) else { return }
        if let records = try storeRecords() {
            guard try await records.stateCopy() != manifest else { return }
            return try await records.saveStateCopy(manifest)
        }
        guard sinkKind == .local, (try? GenerationManifest.load(from: storeCopyURL)) != manifest else { return }
        try FileManager.default.createDirectory(
            at: storeCopyURL.deletingLastPathComponent(),
            withIntermediateDirectories: true
        )
        try manifest.write(to: storeCopyURL, crashPoints: false)
    }

    /// Beside the local store, before a command reads this state's manifest: a state that has none takes the
    /// store's copy; a state's own manifest that the copy does not match is copied again (where the store's
    /// folder can be written: a server's read-only mount is copied by the next run). Nothing for a shard's
    /// state or another store. (`sluice serve` calls it once a second: two small files compared.)
    func followStoreCopy() throws {
        guard sinkKind == .local, !ShardedGenerations.isLinked(stateDirectory) else { return }
        if let own = try manifest() {
            guard isOneState(own), (try? GenerationManifest.load(from: storeCopyURL)) != own,
                FileManager.default.fileExists(atPath: baseStore.path)
            else { return }
            try? FileManager.default.createDirectory(
                at: storeCopyURL.deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            try? own.write(to: storeCopyURL, crashPoints: false)
            return
        }
        // A copy that cannot be read is no copy: it is a recovery aid, never the pointer readers follow. A
        // state that cannot be read is left as it is (the command reading it says so: `serve` on /ready).
        guard let copy = (try? GenerationManifest.load(from: storeCopyURL)) ?? nil, copy.shards == nil else { return }
        let shard: Shard?
        do {
            shard = try recordedShard()
        } catch {
            return
        }
        guard shard == nil else { return }
        try adopt(copy)
    }

    /// Before a run or a change made with one state (no `--shard`): ``followStoreCopy()`` beside the local
    /// store; on a store behind a server, a new state (no checkpoint yet, no manifest) takes the store's copy,
    /// and a state's own manifest that the copy does not match is copied again. A state that exists and has
    /// no manifest (generations never used) costs the store no request.
    package func followStore() async throws {
        guard remote != nil else { return try followStoreCopy() }
        if let own = try manifest() {
            guard isOneState(own) else { return }
            // Repaired when the store can be reached: the run reports a store that cannot (exit 6).
            try? await writeStoreCopy(own)
            return
        }
        // A store that cannot be reached now is the run's to report (its dependency check exits 6), not this
        // read's: the copy is a recovery aid.
        guard !FileManager.default.fileExists(atPath: stateDirectory.appendingPathComponent("data.mdb").path),
            let records = (try? storeRecords()) ?? nil, let copy = (try? await records.stateCopy()) ?? nil,
            copy.shards == nil
        else { return }
        try adopt(copy)
    }

    /// Makes `copy` this state's manifest.
    private func adopt(_ copy: GenerationManifest) throws {
        try FileManager.default.createDirectory(at: stateDirectory, withIntermediateDirectories: true)
        try copy.save(stateDirectory: stateDirectory)
    }
}
