import Foundation
import SluiceCore
import Testing

/// Shards started at the same moment on a fresh target, as a Kubernetes Indexed Job's first deployment
/// starts them (docs/OPERATIONS.md): every shard creates the same table, collection or index at once, and
/// none may lose that race (issue 33). Repeated on fresh targets, on the real PostgreSQL and Chroma and the
/// validating Qdrant stand-in.
@Suite(.serialized)
struct ShardsStartTogetherCLITests {
    @Test(
        "four shards started at once on a fresh target all succeed, trial after trial, and equal one unsharded run",
        arguments: [StoreUnderTest.Kind.pgvector, .chroma, .qdrant]
    )
    func shardsStartTogether(kind: StoreUnderTest.Kind) async throws {
        let ws = try Workspace("shards-together-\(kind.rawValue)")
        defer { ws.cleanUp() }
        let store = try await StoreUnderTest.start(kind, in: ws)
        defer { store.stop() }
        _ = try Corpus.write(count: 16, into: ws.corpus, seed: 0x5EED_0331)
        let whole = store.target(ws, "whole")
        try await ws.run(whole, expecting: 0)
        let expected = try await ws.export(whole)

        let count = 4
        for trial in 0..<3 {
            let sinkName = "fresh\(trial)"
            let processes = try (0..<count).map { index in
                try ws.start(
                    ["run", ws.pipeline.path, "--source", ws.corpus.path, "--quiet", "--shard", "\(index)/\(count)"]
                        + store.target(ws, "trial\(trial)-shard\(index)", sinkName: sinkName).arguments
                )
            }
            for (index, process) in processes.enumerated() {
                let result = try await process.wait(timeout: .seconds(120))
                #expect(result.exitCode == 0, "\(kind), trial \(trial), shard \(index): \(result)")
            }
            let shared = store.target(ws, "trial\(trial)-shard0", sinkName: sinkName)
            try expectSameRecords(
                try await ws.export(shared),
                expected,
                exact: kind.exactVectors,
                "\(kind), trial \(trial): four shards started together vs. one run"
            )
        }
    }
}
