import Foundation
import SluiceCore
import Testing

/// Shards that share one local store with `sink.local_index: ivf`, started together: one trains the lists
/// in bounded commits while the other writes between them (every write keeps the epoch in training up to
/// date, and the filling skips what is placed). The store must end with one current epoch, no training
/// left, and searches that answer as the exact scan does.
@Suite("shards sharing a local store with the IVF index")
struct LocalIVFShardsCLITests {
    @Test("two shards started together on one store with ivf end with one trained epoch and exact answers")
    func shardsTrainTogether() async throws {
        let ws = try Workspace("shards-ivf")
        defer { ws.cleanUp() }
        _ = try Corpus.write(count: 32, into: ws.corpus, seed: 0x1F5A)
        let sharedIndex = ws.root.appendingPathComponent("shared-index")
        func target(_ index: Int) -> Workspace.Target {
            Workspace.Target(state: ws.root.appendingPathComponent("shard-state-\(index)"), index: sharedIndex)
        }
        let settings = LocalIVFCrashCLITests.ivf + ["--set", "sink.batch=4"]
        let shards = try (0..<2).map { index in
            try ws.start(ws.runArguments(target(index), settings + ["--shard", "\(index)/2"]))
        }
        for shard in shards {
            let result = try await shard.wait(timeout: .seconds(600))
            #expect(result.exitCode == 0, "\(result)")
        }
        // A last run finishes a training that the shards' last writes may have begun.
        try await ws.run(target(0), settings + ["--shard", "0/2"], expecting: 0)
        let details = try await LocalIVFCrashCLITests.details(ws, target(0))
        #expect(details["ivf_training"] == nil && details["ivf_lists"] != nil, "\(details)")
        try await LocalIndexCrashCLITests.expectSearchIsExact(ws, target(0), "after the shards", index: settings)
    }
}
