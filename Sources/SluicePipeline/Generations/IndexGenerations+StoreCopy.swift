import Foundation
import SluiceCore
import SluiceSinks
import SluiceState

/// The copy of one state's generation manifest kept with the store (docs/GENERATIONS.md, "How it is
/// stored"): a new state beside the store — the old one lost or deleted, a new machine — follows the index's
/// generations from it rather than going back to the pipeline file's settings (session 47's campaign: such a
/// run rebuilt the index from scratch, orphaned the promoted generation's store and reused its name).
///
/// - The local store keeps it as the file `<store>/generations/manifest.json`; JSONL as the file
///   `<path>_generations.json` beside the original generation's file or folder (`out.jsonl`:
///   `out_generations.json`).
/// - A store behind a server that keeps a sharded deployment's records (pgvector's `<table>_generations`,
///   Chroma's and Qdrant's `<collection>_generations`, Pinecone's coordination store) keeps it as the record
///   ``StoreGenerationDeployment/stateCopyKey``; Pinecone without a coordination store as a record of the
///   index's namespace `sluice-generations` (`PineconeSink+StateCopy.swift`).
///
/// Every change writes it after the state's manifest; a change killed between the two leaves it behind, and
/// the next run or change of that state writes it again. A sharded deployment's one manifest is kept with the
/// store already (``ShardedGenerations``, ``StoreGenerationDeployment``): its states keep no copy.
extension IndexGenerations {
    /// `<store>/generations/manifest.json` (the local store), `<path>_generations.json` (JSONL).
    var storeCopyURL: URL {
        if sinkKind == .jsonl, let remote {
            let path = remote.base.resolve(remote.baseName).path
            let stem = path.hasSuffix(".jsonl") ? String(path.dropLast(".jsonl".count)) : path
            return URL(fileURLWithPath: stem + "_generations.json")
        }
        return baseStore.appendingPathComponent("generations").appendingPathComponent("manifest.json")
    }

    /// Whether the copy is a file beside the store (the local store, JSONL) rather than a record in it.
    private var keepsCopyInFile: Bool { sinkKind == .local || sinkKind == .jsonl }

    /// The folder that must exist for the copy to be written: the store's (the copy never creates a store).
    private var storeCopyHome: URL {
        sinkKind == .jsonl ? storeCopyURL.deletingLastPathComponent() : baseStore
    }

    /// Whether `manifest` is one state's (not a sharded deployment's).
    func isOneState(_ manifest: GenerationManifest) -> Bool {
        manifest.shards == nil && !ShardedGenerations.isLinked(stateDirectory)
    }

    /// The store's records, where it keeps them (a store behind a server); nil otherwise.
    private func storeRecords() throws -> StoreGenerationDeployment? {
        guard let remote else { return nil }
        return try StoreGenerationDeployment(remote)
    }

    /// Where a store behind a server keeps the copy: among the deployment's records, or, for Pinecone without a
    /// coordination store, in a namespace of the index (``PineconeSink/stateCopyNamespace``); nil otherwise.
    private func stateCopyHome() throws -> StateCopyHome? {
        if let records = try storeRecords() { return .records(records) }
        guard let remote, remote.kind == .pinecone,
            let index = try remote.sink(of: GenerationManifest.original) as? PineconeSink
        else { return nil }
        return .pinecone(index)
    }

    /// Writes the store's copy of one state's `manifest` when it differs, unless the copy is the later
    /// (another state over the same store changed generations since: ``followStoreCopy()`` follows it).
    func writeStoreCopy(_ manifest: GenerationManifest) async throws {
        guard isOneState(manifest) else { return }
        if let home = try stateCopyHome() { return try await write(manifest, to: home, over: try await home.load()) }
        let copy = fileStoreCopy
        guard keepsCopyInFile, copy != manifest, !(copy?.isLater(than: manifest) ?? false) else { return }
        try FileManager.default.createDirectory(
            at: storeCopyURL.deletingLastPathComponent(),
            withIntermediateDirectories: true
        )
        try manifest.write(to: storeCopyURL, crashPoints: false)
    }

    /// Writes `manifest` to the store's record of the copy, which holds `copy` (read by the caller), when the two
    /// differ and `copy` is not the later.
    private func write(
        _ manifest: GenerationManifest,
        to home: StateCopyHome,
        over copy: GenerationManifest?
    )
        async throws
    {
        guard copy != manifest, !(copy?.isLater(than: manifest) ?? false) else { return }
        try await home.save(manifest)
    }

    /// Beside the local store or JSONL files, before a command reads this state's manifest: a state that has
    /// none takes the store's copy, and so does a state whose manifest the copy is later than (another state
    /// over the same store — a reader's, or one given by mistake — changed generations since: it never writes
    /// its older manifest over the copy); a state's own manifest that the copy does not match is copied again
    /// (where the store's folder can be written: a server's read-only mount is copied by the next run).
    /// Nothing for a shard's state or another store. (`sluice serve` calls it once a second: two small files
    /// compared.)
    /// - Parameter holdingLock: whether the caller holds the state's lock (a change).
    func followStoreCopy(holdingLock: Bool = false) throws {
        guard keepsCopyInFile, !ShardedGenerations.isLinked(stateDirectory) else { return }
        if let own = try manifest() {
            let copy = fileStoreCopy
            guard isOneState(own), copy != own else { return }
            if let copy, copy.shards == nil, copy.isLater(than: own) {
                return try followLater(copy, holdingLock: holdingLock)
            }
            guard FileManager.default.fileExists(atPath: storeCopyHome.path) else { return }
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

    /// Before a run or a change made with one state (no `--shard`): a new state beside a sharded deployment's
    /// generations follows them (``followDeploymentAsOneState()``); then ``followStoreCopy()`` beside the local
    /// store or JSONL files; on a store behind a server, a new state (no checkpoint yet, no manifest) takes the
    /// store's copy, and a state's own manifest that the copy does not match is copied again. A state that
    /// exists and has no manifest (generations never used) costs the store no request.
    /// - Parameter holdingLock: whether the caller holds the state's lock (a change).
    package func followStore(holdingLock: Bool = false) async throws {
        try await followDeploymentAsOneState()
        guard remote != nil, !keepsCopyInFile else { return try followStoreCopy(holdingLock: holdingLock) }
        if let own = try manifest() {
            guard isOneState(own) else { return }
            // Followed, or repaired, when the store can be reached: the run reports a store that cannot (exit 6).
            // The copy is read once, for both.
            guard let home = (try? stateCopyHome()) ?? nil else { return }
            let copy: GenerationManifest?
            do {
                copy = try await home.load()
            } catch {
                return
            }
            if let copy, copy.shards == nil, copy.isLater(than: own) {
                return try followLater(copy, holdingLock: holdingLock)
            }
            try? await write(own, to: home, over: copy)
            return
        }
        // A store that cannot be reached now is the run's to report (its dependency check exits 6), not this
        // read's: the copy is a recovery aid.
        guard !CheckpointStore.exists(at: stateDirectory),
            let home = (try? stateCopyHome()) ?? nil, let copy = (try? await home.load()) ?? nil,
            copy.shards == nil
        else { return }
        try adopt(copy)
    }

    /// On a store behind a server, before a read command reads this state's manifest (`sluice serve`: once a
    /// second) with a reader's state — one without a checkpoint (another machine's `serve`): a state with no
    /// manifest takes the store's copy, and one whose manifest the copy is later than follows it. One request
    /// to the store. Nothing for a state with a checkpoint (a loading state's: its runs and changes follow the
    /// copy, ``followStore(holdingLock:)``, and its `serve` costs the store no request a second). It never
    /// writes the store: a copy that the state's manifest is later than is repaired by that state's next run
    /// or change.
    /// - Parameter own: this state's manifest (nil: none).
    func followStoreRecordCopy(over own: GenerationManifest?) async throws {
        guard own.map(isOneState) ?? true,
            !CheckpointStore.exists(at: stateDirectory)
        else { return }
        // A store that cannot be reached now is the read's to report: the copy is a recovery aid.
        guard let home = (try? stateCopyHome()) ?? nil, let copy = (try? await home.load()) ?? nil,
            copy.shards == nil
        else { return }
        guard let own else { return try adopt(copy) }
        if copy.isLater(than: own) { try followLater(copy, holdingLock: false) }
    }

    /// A new state run without `--shard` beside a sharded deployment's generations (its shards' runs moved to
    /// one state: re-sharding N → 1) takes the deployment's manifest as its own, one state's, unless the
    /// store's copy of one state's manifest is as recent (its next generation's number as high): a state's
    /// first run follows whichever of the two made the last generation. Nothing for a state that has a
    /// manifest, a checkpoint, or a shard.
    /// - Throws: ``SluiceError/Code/configuration`` while the deployment's candidate is being built (its
    ///   parts are the shards').
    private func followDeploymentAsOneState() async throws {
        guard try manifest() == nil,
            !CheckpointStore.exists(at: stateDirectory)
        else { return }
        let shared: GenerationManifest?
        let copy: GenerationManifest?
        if sinkKind == .local {
            shared = (try? GenerationManifest.load(from: ShardedGenerations(baseStore: baseStore).manifestURL)) ?? nil
            copy = fileStoreCopy
        } else if remote != nil, !keepsCopyInFile, let records = (try? storeRecords()) ?? nil {
            // A store that cannot be reached now is the run's to report (exit 6).
            shared = (try? await records.manifest())??.manifest
            copy = (try? await records.stateCopy()) ?? nil
        } else {
            return
        }
        guard let shared, let shards = shared.shards, shared.next > (copy?.next ?? 0) else { return }
        let manifest = try Self.moved(
            shared,
            shards: nil,
            whose: "of a sharded deployment (\(shards) shards)",
            owner: "a shard's state"
        )
        try adopt(manifest)
        try? await writeStoreCopy(manifest)
    }

    /// `manifest` as a deployment moved between one state and shards takes it: with `shards` (nil: one
    /// state's), no parts counted yet.
    /// - Throws: ``SluiceError/Code/configuration`` while it names a candidate: its documents are being
    ///   indexed by the runs of the deployment as it was (`whose`), which end it (with `owner`).
    private static func moved(
        _ manifest: GenerationManifest,
        shards: Int?,
        whose: String,
        owner: String
    ) throws -> GenerationManifest {
        if let candidate = manifest.candidate {
            throw SluiceError(
                .configuration,
                "the store's generations \(whose) have the candidate \(candidate.id) in the making: promote or drop it with \(owner) (`sluice generation promote|drop`) before running as \(shards == nil ? "one state" : "shards") (docs/GENERATIONS.md, \"Sharded deployments\")"
            )
        }
        var moved = manifest
        moved.shards = shards
        moved.partsSince = nil
        return moved
    }

    /// The deployment's manifest when one state's generations are re-sharded (its runs move to `--shard K/N`,
    /// every shard a new state): the store's copy of that state's manifest, with the shard count. Nil when
    /// the store keeps no copy, one of a sharded deployment, or one no more recent than the deployment's
    /// `current` manifest (its next generation's number not higher: the shards made that one from it, or
    /// changed generations since).
    /// - Throws: ``SluiceError/Code/configuration`` while the copy names a candidate: the one state builds
    ///   it, and shards could not tell which of its documents it holds.
    func deploymentManifest(
        fromStoreCopy copy: GenerationManifest?,
        over current: GenerationManifest?,
        shards: Int
    ) throws -> GenerationManifest? {
        guard let copy, copy.shards == nil, copy.next > (current?.next ?? 0) else { return nil }
        return try Self.moved(copy, shards: shards, whose: "as one state left them", owner: "that state")
    }

    /// The copy of one state's manifest beside the local store; nil when there is none or it cannot be read.
    var fileStoreCopy: GenerationManifest? { (try? GenerationManifest.load(from: storeCopyURL)) ?? nil }

    /// Makes the store's copy, later than this state's own manifest, this state's manifest: unless the state is a
    /// shard's, or a run or a change holds it (it follows at its next command; a run or a change of its own
    /// in progress is never switched under it).
    private func followLater(_ copy: GenerationManifest, holdingLock: Bool) throws {
        guard (try? recordedShard()) ?? nil == nil else { return }
        if holdingLock { return try adopt(copy) }
        guard let lock = try StateLock.unlessHeld(directory: stateDirectory) else { return }
        defer { withExtendedLifetime(lock) {} }
        try adopt(copy)
    }

    /// Makes `copy` this state's manifest.
    private func adopt(_ copy: GenerationManifest) throws {
        try FileManager.default.createDirectory(at: stateDirectory, withIntermediateDirectories: true)
        try copy.save(stateDirectory: stateDirectory)
    }
}

/// Where a store behind a server keeps the copy of one state's manifest (``IndexGenerations/writeStoreCopy(_:)``).
private enum StateCopyHome {
    /// The record ``StoreGenerationDeployment/stateCopyKey`` among the deployment's records.
    case records(StoreGenerationDeployment)
    /// A record of the Pinecone index's namespace ``PineconeSink/stateCopyNamespace``.
    case pinecone(PineconeSink)

    /// The copy; nil when there is none, or it cannot be read (a recovery aid, never the pointer readers follow).
    func load() async throws -> GenerationManifest? {
        switch self {
        case .records(let records): return try await records.stateCopy()
        case .pinecone(let index):
            return try await index.stateCopy().flatMap { try? JSONDecoder().decode(GenerationManifest.self, from: $0) }
        }
    }

    func save(_ manifest: GenerationManifest) async throws {
        switch self {
        case .records(let records): try await records.saveStateCopy(manifest)
        case .pinecone(let index):
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            try await index.saveStateCopy(try encoder.encode(manifest))
        }
    }
}
