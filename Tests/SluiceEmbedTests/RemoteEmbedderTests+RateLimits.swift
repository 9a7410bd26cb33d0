import SluiceTesting
import Testing

@testable import SluiceEmbed

/// The budget against the stand-in's rate limits.
extension RemoteEmbedderTests {
    @Test func aDrainedBucketCostsOneRateLimitNotABurst() async throws {
        // 6,000 tokens/min (100/s), empty at the start: another run used it. Ours starts full.
        let server = try await StandInServer.launch(
            script: "openai_standin.py",
            arguments: ["--tpm", "6000", "--start-level", "0", "--dims", "32"]
        )
        let embedder = try Self.embedder(server, key: nil) {
            $0.tokensPerMinute = 6_000
            $0.maxConcurrency = 8
        }
        let counts = try await withThrowingTaskGroup(of: Int.self) { group in
            for batch in 0..<6 {
                group.addTask { try await embedder.embed(Self.texts(2, prefix: "batch \(batch)")).count }
            }
            return try await group.reduce(0, +)
        }
        #expect(counts == 12)
        #expect((try await Self.stats(server)["rate_limited"] ?? 0) <= 1)
    }
}
