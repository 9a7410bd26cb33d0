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
    /// The parts of `candidate` that count, by shard index: those whose run began at manifest version
    /// `since` or later (``GenerationManifest/partsSince``; nil: every part). A part left by a run that
    /// began before (of an earlier time the same generation was the candidate) is as if none was written.
    func currentParts(of candidate: String, count: Int, since: Int?) async throws -> [Int: ShardedGenerations.Part] {
        let parts = try await parts(of: candidate, count: count)
        guard let since else { return parts }
        return parts.filter { ($0.value.version ?? 0) >= since }
    }

    /// The shards whose part of `candidate` is not complete (none written counts as incomplete), of `count`.
    /// - Parameter since: as for ``currentParts(of:count:since:)``.
    func incompleteShards(of candidate: String, count: Int, since: Int? = nil) async throws -> [Int] {
        let parts = try await currentParts(of: candidate, count: count, since: since)
        return (0..<count).filter { parts[$0]?.complete != true }
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
