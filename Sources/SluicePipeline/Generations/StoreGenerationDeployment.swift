import Foundation
import SluiceCore
import SluiceSinks
import SluiceState

/// The index generations of a sharded deployment whose store is behind a server (docs/GENERATIONS.md,
/// "Sharded deployments"): the shards' states may be on several machines, so the one manifest and the
/// shards' parts are kept in the store itself (``SharedGenerationRecords``: pgvector's table
/// `<table>_generations`; Chroma's and Qdrant's collection `<collection>_generations`), or, for Pinecone, in
/// the coordination store the pipeline file names (``PostgresCoordinationStore``, ``S3CoordinationStore``), and the deployment's
/// lock is the store's where it has one (pgvector: an advisory lock).
///
/// - The record `manifest` is the deployment's manifest; every shard's `STATE/generations.json` is a copy of
///   it, brought in line by every command before it reads it (``IndexGenerations/followDeployment(storeCopy:)``), and
///   by a running `sluice serve` once a second. A change writes the record first, conditionally on the
///   version it read under the deployment's exclusive lock (so two changes, or a change and a shard joining,
///   never overwrite each other), then the copy of the state it runs with.
/// - The records `parts/<candidate>/<K>-of-<N>` are the shards' parts of the candidate, as
///   ``ShardedGenerations`` keeps them in files beside a local store.
struct StoreGenerationDeployment: GenerationParts {
    let records: any SharedGenerationRecords

    static let manifestKey = "manifest"

    /// The name of `remote`'s records in a coordination store that several deployments may share: the host
    /// of the Pinecone control plane (`sink.url`, else Pinecone's), the index and the original generation's
    /// namespace (`pinecone api.pinecone.io index docs namespace tests`).
    static func deploymentName(_ remote: RemoteGenerationStore) -> String {
        let control = remote.base.sink.url ?? PineconeSink.Settings.defaultControlURL
        let host = URLComponents(string: control).flatMap { components in
            components.host.map { host in components.port.map { "\(host):\($0)" } ?? host }
        }
        return
            "\(remote.kind) \(host ?? control) index \(remote.base.sink.index ?? "") namespace \(remote.base.sink.namespace)"
    }
    static let partsPrefix = "parts/"

    /// The store's records for `remote`'s generations, or the coordination store's when the pipeline file
    /// names one (`generations.coordination`: Pinecone); nil for a store that keeps none.
    init?(_ remote: RemoteGenerationStore) throws {
        if let coordination = try CoordinationStore.open(remote.base, deployment: Self.deploymentName(remote)) {
            records = coordination
            return
        }
        guard let records = try remote.sink(of: GenerationManifest.original) as? any SharedGenerationRecords else {
            return nil
        }
        self.records = records
    }

    /// The deployment's manifest and the version of its record; nil before `generation start`.
    /// - Throws: ``SluiceError/Code/stateCorrupt`` when the record cannot be read as a manifest.
    func manifest() async throws -> (manifest: GenerationManifest, version: Int)? {
        guard let record = try await records.sharedRecord(Self.manifestKey) else { return nil }
        do {
            return (try JSONDecoder().decode(GenerationManifest.self, from: record.value), record.version)
        } catch {
            throw SluiceError(
                .stateCorrupt,
                "the deployment's generation manifest in the store cannot be read (\(error)): it names the active generation (docs/GENERATIONS.md, \"Sharded deployments\")",
                cause: error
            )
        }
    }

    /// Writes the manifest if its record is still at `version` (0: there is none yet).
    /// - Throws: ``SluiceError/Code/lockHeld`` when another process changed it meanwhile (nothing written).
    func save(_ manifest: GenerationManifest, expecting version: Int) async throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        guard try await records.writeSharedRecord(Self.manifestKey, try encoder.encode(manifest), expecting: version)
        else {
            throw SluiceError(
                .lockHeld,
                "the deployment's generation manifest changed while this command ran (another shard's `sluice generation …`): nothing was changed; run the command again"
            )
        }
    }

    /// The record of one state's manifest (an unsharded deployment's: ``IndexGenerations/writeStoreCopy(_:)``),
    /// kept apart from a sharded deployment's `manifest`.
    static let stateCopyKey = "one-state-manifest"

    /// The copy of one state's manifest; nil when there is none, or it cannot be read (then a new state goes
    /// on as before it: the copy is a recovery aid, never the pointer readers follow).
    func stateCopy() async throws -> GenerationManifest? {
        guard let record = try await records.sharedRecord(Self.stateCopyKey) else { return nil }
        return try? JSONDecoder().decode(GenerationManifest.self, from: record.value)
    }

    /// Writes the copy of one state's manifest (one state writes it: unconditionally).
    func saveStateCopy(_ manifest: GenerationManifest) async throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        _ = try await records.writeSharedRecord(Self.stateCopyKey, try encoder.encode(manifest), expecting: nil)
    }

    static func partKey(_ candidate: String, _ shard: Shard) -> String {
        "\(partsPrefix)\(candidate)/\(shard.index)-of-\(shard.count)"
    }

    func write(_ part: ShardedGenerations.Part, of candidate: String, shard: Shard) async throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Each shard writes only its own part: unconditionally.
        _ = try await records.writeSharedRecord(
            Self.partKey(candidate, shard),
            try encoder.encode(part),
            expecting: nil
        )
    }

    func parts(of candidate: String, count: Int) async throws -> [Int: ShardedGenerations.Part] {
        let stored = try await records.sharedRecords(prefix: "\(Self.partsPrefix)\(candidate)/")
        var result: [Int: ShardedGenerations.Part] = [:]
        for index in 0..<count {
            guard let shard = try? Shard(index: index, count: count),
                let data = stored[Self.partKey(candidate, shard)],
                let part = try? JSONDecoder().decode(ShardedGenerations.Part.self, from: data)
            else { continue }
            result[index] = part
        }
        return result
    }

    func removeParts() async throws {
        try await records.deleteSharedRecords(prefix: Self.partsPrefix)
    }

    /// The deployment's lock: shared for a shard's run, exclusive for a change; nil for a store that has none
    /// (Chroma, Qdrant: there a change is protected by the manifest's conditional write alone, and a shard's
    /// part by the manifest version it was built under).
    /// - Throws: ``SluiceError/Code/lockHeld`` while it is held the other way.
    func lock(shared: Bool) async throws -> (any DeploymentLockHold)? {
        try await records.deploymentLock(shared: shared)
    }
}
