import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluicePipeline

/// Which shards' parts of a candidate count (docs/GENERATIONS.md, "Sharded deployments"): only complete
/// parts, and, where the manifest says from which version they count (a store without the deployment's
/// lock), only those whose run began at that version or later.
@Suite struct GenerationPartsTests {
    /// Parts of `g1` for three shards: 0 complete at version 4, 1 complete at version 2 (a run that began
    /// before the candidate was made again), 2 incomplete at version 5.
    static func writeParts(_ parts: ShardedGenerations) throws {
        let shards = try (0..<3).map { try Shard(index: $0, count: 3) }
        try parts.write(ShardedGenerations.Part(complete: true, version: 4), of: "g1", shard: shards[0])
        try parts.write(ShardedGenerations.Part(complete: true, version: 2), of: "g1", shard: shards[1])
        try parts.write(ShardedGenerations.Part(complete: false, version: 5), of: "g1", shard: shards[2])
    }

    @Test(
        "a part counts when complete and built at or after the version parts count from",
        arguments: [
            (nil, [0, 1, 2], [2]), (2, [0, 1, 2], [2]), (3, [0, 2], [1, 2]), (5, [2], [0, 1, 2]),
        ] as [(Int?, Set<Int>, [Int])]
    )
    func partsThatCount(since: Int?, current: Set<Int>, incomplete: [Int]) async throws {
        let folder = try TemporaryDirectory.make("generation-parts")
        defer { TemporaryDirectory.remove(folder) }
        let parts = ShardedGenerations(baseStore: folder)
        try Self.writeParts(parts)
        #expect(Set(try await parts.currentParts(of: "g1", count: 3, since: since).keys) == current)
        #expect(try await parts.incompleteShards(of: "g1", count: 3, since: since) == incomplete)
    }
}
