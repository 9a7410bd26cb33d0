import Foundation
import SluiceCore
import SluiceState

/// What `sluice generation status` shows of one generation.
package struct GenerationReport: Sendable, Hashable, Codable {
    /// `active`, `candidate` or `previous`.
    package var role: String
    /// `g0`, `g1`, …
    package var id: String
    /// The settings it changes in the pipeline file's (`key=value`).
    package var overrides: [String]
    /// The embedder its vectors were made with (nil before its first run).
    package var embedder: String?
    /// Its documents by status (`indexed`, `failed`).
    package var documents: [String: Int]
    /// The vector ids its document records say its store holds.
    package var vectors: Int
    /// The bytes of its store: its files (local store, JSONL), its table with its indexes (pgvector), or an
    /// estimate (``bytesEstimated``); nil when the store cannot tell (not created yet, or not reachable).
    package var bytes: Int?
    /// Whether ``bytes`` is an estimate, vectors × dimensions × 4 bytes (Qdrant, Chroma, Pinecone, whose
    /// servers report no size), rather than measured.
    package var bytesEstimated = false
    /// Its store's folder, or its table or collection (`table t_g1`) in a store behind a server.
    package var store: String
    /// When it was started (seconds since 1970).
    package var createdAt: Double
    /// How it compares with the active generation's document records (what promote checks).
    package var completeness: Completeness?

    package func encode(to encoder: any Encoder) throws {
        // Every key written out (`bytes` as null for a store behind a server, and `embedder` before the
        // first run, as before), so that a reader finds each one.
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(role, forKey: .role)
        try container.encode(id, forKey: .id)
        try container.encode(overrides, forKey: .overrides)
        try container.encodeIfPresent(embedder, forKey: .embedder)
        try container.encode(documents, forKey: .documents)
        try container.encode(vectors, forKey: .vectors)
        try container.encode(bytes, forKey: .bytes)
        try container.encode(bytesEstimated, forKey: .bytesEstimated)
        try container.encode(store, forKey: .store)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encodeIfPresent(completeness, forKey: .completeness)
    }

    /// What a generation takes in its store (``RemoteGenerationStore/size(of:)``).
    package struct Size: Sendable, Hashable {
        package var bytes: Int
        /// Vectors × dimensions × 4 bytes, not a size the store measured.
        package var estimated: Bool

        package init(bytes: Int, estimated: Bool) {
            self.bytes = bytes
            self.estimated = estimated
        }

        /// `12.3 MB`, or `≈12.3 MB (estimate: vectors × dimensions × 4 bytes)`.
        package var description: String {
            let figure = String(format: "%.1f MB", Double(bytes) / 1_048_576)
            return estimated ? "≈\(figure) (estimate: vectors × dimensions × 4 bytes)" : figure
        }
    }

    /// What ``IndexGenerations/Completeness`` found, counted.
    package struct Completeness: Sendable, Hashable, Codable {
        /// Whether it holds every document indexed in the active generation, from the same bytes, and no
        /// other, with no write pending (for the active generation itself: no write pending).
        package var complete: Bool
        /// Documents indexed in the active generation and not (or from other bytes) in it.
        package var missing: Int
        /// Documents it holds and the active generation does not.
        package var extra: Int
        /// Documents with a write not yet confirmed (an interrupted run).
        package var pending: Int

        init(_ completeness: IndexGenerations.Completeness) {
            complete = completeness.isComplete
            missing = completeness.missing.count
            extra = completeness.extra.count
            pending = completeness.pending.count
        }
    }
}

/// What `sluice generation status` shows: each generation, and the quality gate's last comparison
/// (`--json`: this object, keys sorted; a generation that does not exist is null).
package struct GenerationsReport: Sendable, Hashable, Codable {
    package var active: GenerationReport?
    package var candidate: GenerationReport?
    package var previous: GenerationReport?
    /// The last comparison of a candidate with the active generation (``GenerationComparison``).
    package var comparison: GenerationComparison?
    /// A sharded deployment's shards and their parts of the candidate; nil for one state.
    package var shards: ShardsReport?

    /// The generations that exist, the active one first.
    package var all: [GenerationReport] { [active, candidate, previous].compactMap { $0 } }

    package func encode(to encoder: any Encoder) throws {
        // Nulls written out, so that a reader finds every key.
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(active, forKey: .active)
        try container.encode(candidate, forKey: .candidate)
        try container.encode(previous, forKey: .previous)
        try container.encode(comparison, forKey: .comparison)
        try container.encode(shards, forKey: .shards)
    }
}

/// What `sluice generation status` shows of a sharded deployment (docs/GENERATIONS.md, "Sharded
/// deployments"): from its one manifest, every shard's part of the candidate, as that shard's last run left it.
package struct ShardsReport: Sendable, Hashable, Codable {
    /// The number of shards.
    package var count: Int
    /// The candidate the parts are of; nil without a candidate (then there are no parts).
    package var candidate: String?
    /// Every shard's part, shard 0 first (with a candidate; empty without).
    package var parts: [Part]

    /// One shard's part of the candidate.
    package struct Part: Sendable, Hashable, Codable {
        /// The shard's index (`K` of `K/N`).
        package var shard: Int
        /// Whether a run of the shard has begun building it (false: not built yet).
        package var started: Bool
        /// Whether the shard's last run ended with its part complete (what promote requires of every part).
        package var complete: Bool
        /// What its last run found: documents missing, extra, with a write pending (0 when not started).
        package var missing: Int
        package var extra: Int
        package var pending: Int
        /// The candidate's documents (indexed) and vectors in the shard's state, when its last run ended;
        /// nil while a run is building it, or before.
        package var documents: Int?
        package var vectors: Int?
        /// When the part was last written (seconds since 1970); nil when not started.
        package var at: Double?

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(shard, forKey: .shard)
            try container.encode(started, forKey: .started)
            try container.encode(complete, forKey: .complete)
            try container.encode(missing, forKey: .missing)
            try container.encode(extra, forKey: .extra)
            try container.encode(pending, forKey: .pending)
            try container.encode(documents, forKey: .documents)
            try container.encode(vectors, forKey: .vectors)
            try container.encode(at, forKey: .at)
        }
    }

    package var completeParts: Int { parts.filter(\.complete).count }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(count, forKey: .count)
        try container.encode(candidate, forKey: .candidate)
        try container.encode(parts, forKey: .parts)
    }
}

extension IndexGenerations {
    /// Every generation, with its completeness against the active one, its size, and the last comparison
    /// (every field nil without generations). Reads without the state lock (a run may be going on); a store
    /// behind a server is asked for its sizes (a size it cannot tell is nil).
    package func report() async throws -> GenerationsReport {
        guard let manifest = try manifest() else { return GenerationsReport() }
        var result = GenerationsReport(comparison: manifest.comparison)
        if let count = manifest.shards {
            result.shards = try await shardsReport(
                count: count,
                candidate: manifest.candidate?.id,
                since: manifest.partsSince
            )
        }
        let roles: [(String, GenerationManifest.Generation?)] = [
            ("active", manifest.active), ("candidate", manifest.candidate), ("previous", manifest.previous),
        ]
        for case (let role, let generation?) in roles {
            // Nil before the generation's first run (its table does not exist yet).
            let checkpoint = try? CheckpointStore(directory: stateDirectory, readOnly: true, generation: generation.id)
            var documents: [String: Int] = [:]
            var vectors = 0
            try checkpoint?.forEachDocument { record in
                documents[record.status.rawValue, default: 0] += 1
                vectors += record.chunkIDs.count
            }
            // Before its first run too (all of the active generation's documents missing): then through the
            // state's first table, opened only when the generation's own could not be.
            let completeness = try (checkpoint ?? (try? CheckpointStore(directory: stateDirectory, readOnly: true))).map
            {
                try Self.completeness(of: generation.id, against: manifest.active.id, in: $0)
            }
            let size = await size(of: generation)
            let report = GenerationReport(
                role: role,
                id: generation.id,
                overrides: generation.overrides,
                embedder: try checkpoint?.metadata("embedder"),
                documents: documents,
                vectors: vectors,
                bytes: size?.bytes,
                bytesEstimated: size?.estimated ?? false,
                store: storeLocation(generation.id),
                createdAt: generation.createdAt,
                completeness: completeness.map(GenerationReport.Completeness.init)
            )
            switch role {
            case "active": result.active = report
            case "candidate": result.candidate = report
            default: result.previous = report
            }
        }
        return result
    }

    /// Every shard's part of `candidate`, from the deployment's one manifest and parts (beside a local store, or
    /// in a store behind a server).
    /// - Parameter since: the manifest's ``GenerationManifest/partsSince`` (what promote counts).
    func shardsReport(count: Int, candidate: String?, since: Int?) async throws -> ShardsReport {
        guard let candidate, let store = try shardParts() else {
            return ShardsReport(count: count, candidate: candidate, parts: [])
        }
        let written = try await store.currentParts(of: candidate, count: count, since: since)
        let parts = (0..<count).map { index in
            guard let part = written[index] else {
                return ShardsReport.Part(
                    shard: index,
                    started: false,
                    complete: false,
                    missing: 0,
                    extra: 0,
                    pending: 0
                )
            }
            return ShardsReport.Part(
                shard: index,
                started: true,
                complete: part.complete,
                missing: part.missing,
                extra: part.extra,
                pending: part.pending,
                documents: part.documents,
                vectors: part.vectors,
                at: part.at
            )
        }
        return ShardsReport(count: count, candidate: candidate, parts: parts)
    }

    /// The active generation's name and size (what a candidate needs room for); nil without generations or
    /// when the store cannot tell.
    package func activeSize() async throws -> (id: String, size: GenerationReport.Size)? {
        guard let active = try manifest()?.active, let size = await size(of: active) else { return nil }
        return (active.id, size)
    }

    /// What `generation` takes in its store (``GenerationReport/Size``); nil when the store cannot tell.
    package func size(of generation: GenerationManifest.Generation) async -> GenerationReport.Size? {
        guard let remote else {
            let bytes = Self.bytes(
                of: storeDirectory(generation.id),
                skipping: generation.isOriginal ? "generations" : nil
            )
            return GenerationReport.Size(bytes: bytes, estimated: false)
        }
        return try? await remote.size(of: generation.id)
    }

    /// The bytes of the files under `folder` (but not under its child `skipping`).
    static func bytes(of folder: URL, skipping: String?) -> Int {
        let manager = FileManager.default
        let items = (try? manager.contentsOfDirectory(atPath: folder.path)) ?? []
        var total = 0
        for item in items where item != skipping {
            let url = folder.appendingPathComponent(item)
            var isDirectory: ObjCBool = false
            guard manager.fileExists(atPath: url.path, isDirectory: &isDirectory) else { continue }
            if isDirectory.boolValue {
                total += bytes(of: url, skipping: nil)
            } else {
                total += ((try? manager.attributesOfItem(atPath: url.path)[.size]) as? NSNumber)?.intValue ?? 0
            }
        }
        return total
    }
}
