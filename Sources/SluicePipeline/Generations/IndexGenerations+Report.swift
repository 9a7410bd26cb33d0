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
    /// The bytes of its store's files.
    package var bytes: Int
    /// Its store's folder.
    package var store: String
}

extension IndexGenerations {
    /// Every generation, the active one first (empty without generations). Reads without the state lock (a
    /// run may be going on).
    package func report() throws -> [GenerationReport] {
        guard let manifest = try manifest() else { return [] }
        let roles: [(String, GenerationManifest.Generation?)] = [
            ("active", manifest.active), ("candidate", manifest.candidate), ("previous", manifest.previous),
        ]
        var reports: [GenerationReport] = []
        for case (let role, let generation?) in roles {
            // Nil before the generation's first run (its table does not exist yet).
            let checkpoint = try? CheckpointStore(directory: stateDirectory, readOnly: true, generation: generation.id)
            var documents: [String: Int] = [:]
            var vectors = 0
            try checkpoint?.forEachDocument { record in
                documents[record.status.rawValue, default: 0] += 1
                vectors += record.chunkIDs.count
            }
            let store = storeDirectory(generation.id)
            reports.append(
                GenerationReport(
                    role: role,
                    id: generation.id,
                    overrides: generation.overrides,
                    embedder: try checkpoint?.metadata("embedder"),
                    documents: documents,
                    vectors: vectors,
                    bytes: Self.bytes(of: store, skipping: generation.isOriginal ? "generations" : nil),
                    store: store.path
                )
            )
        }
        return reports
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
