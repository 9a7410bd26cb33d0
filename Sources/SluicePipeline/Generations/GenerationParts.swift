import Foundation
import SluiceCore

/// Where a sharded deployment keeps each shard's part of the candidate generation (docs/GENERATIONS.md,
/// "Sharded deployments"): files beside a local store (``ShardedGenerations``), or records in a store behind
/// a server (``StoreGenerationDeployment``).
protocol GenerationParts: Sendable {
    /// Writes a shard's part of `candidate` (replacing the one it wrote before).
    func write(_ part: ShardedGenerations.Part, of candidate: String, shard: Shard) async throws
    /// The parts of `candidate` written so far, by shard index (of `count` shards).
    func parts(of candidate: String, count: Int) async throws -> [Int: ShardedGenerations.Part]
    /// Deletes every part (after a change: they describe the generations as they were before it).
    func removeParts() async throws
}

extension GenerationParts {
    /// The shards whose part of `candidate` is not complete (none written counts as incomplete), of `count`.
    /// - Parameter since: the manifest version a part's run must have begun at, or after, to count
    ///   (``GenerationManifest/partsSince``); nil: every part counts.
    func incompleteShards(of candidate: String, count: Int, since: Int? = nil) async throws -> [Int] {
        let parts = try await parts(of: candidate, count: count)
        return (0..<count).filter { index in
            guard let part = parts[index], part.complete else { return true }
            guard let since else { return false }
            return (part.version ?? 0) < since
        }
    }
}

extension ShardedGenerations: GenerationParts {
    func parts(of candidate: String, count: Int) async throws -> [Int: Part] {
        var result: [Int: Part] = [:]
        for index in 0..<count {
            guard let shard = try? Shard(index: index, count: count),
                let data = FileManager.default.contents(atPath: partURL(candidate, shard).path),
                let part = try? JSONDecoder().decode(Part.self, from: data)
            else { continue }
            result[index] = part
        }
        return result
    }
}
