import Foundation
import SluiceCore
import Testing

extension SluiceCLITests {
    // MARK: verify with a shard's state (docs/OPERATIONS.md, "A lost state, re-sharding")

    @Test(
        "verify with a shard's state compares it with its own documents' vectors only; --repair deletes a lost state's leftovers and never another shard's vectors"
    )
    func shardVerifyStaysWithinItsShard() async throws {
        let ws = try Workspace("shard-verify")
        defer { ws.cleanUp() }
        let keys = try Corpus.write(count: 24, into: ws.corpus, seed: 0x5EED_0077)
        let count = 2
        let sharedIndex = ws.root.appendingPathComponent("shared-index")
        func target(_ index: Int) -> Workspace.Target {
            Workspace.Target(state: ws.root.appendingPathComponent("shard-state-\(index)"), index: sharedIndex)
        }
        func command(_ verb: String, _ index: Int, _ extra: [String] = []) -> [String] {
            [verb, ws.pipeline.path] + target(index).arguments + ["--source", ws.corpus.path, "--quiet"] + extra
        }
        // `verify` reads the source from the pipeline file (its repair run processes documents again).
        func verify(_ index: Int, _ extra: [String] = []) async throws -> (CommandResult, [String: Any]) {
            let result = try await ws.sluice(
                ["verify", ws.pipeline.path] + target(index).arguments + ["--json"] + extra
            )
            let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            return (result, try #require(object, "\(result)"))
        }
        for index in 0..<count {
            let run = try await ws.sluice(command("run", index, ["--shard", "\(index)/\(count)"]))
            #expect(run.exitCode == 0, "\(run)")
        }
        let loaded = try Export.records(try await ws.export(target(0)))

        // Each shard's state agrees with its part of the shared store: the other shard's vectors are not unknown.
        for index in 0..<count {
            let (result, report) = try await verify(index)
            #expect(result.exitCode == 0, "shard \(index): \(result)")
            #expect(report["unknown_vectors"] as? Int == 0, "shard \(index): \(result.stdout)")
            #expect(report["shard"] as? String == "\(index)/\(count)")
        }

        // Shard 0 loses its state; one of its documents is deleted from the source meanwhile. The new state
        // adopts the store's vectors and cannot know the deleted document: verify finds its vectors.
        let victim = try #require(try keys.first { try Shard(index: 0, count: count).owns($0) })
        let victimRecords = loaded.filter { $0.documentKey == victim }.count
        #expect(victimRecords > 0)
        try FileManager.default.removeItem(at: target(0).state)
        try FileManager.default.removeItem(at: ws.corpus.appendingPathComponent(victim))
        let again = try await ws.sluice(command("run", 0, ["--shard", "0/\(count)", "--prune"]))
        #expect(again.exitCode == 0, "\(again)")
        let (found, report) = try await verify(0)
        #expect(found.exitCode == 2, "\(found)")
        #expect(report["unknown_vectors"] as? Int == victimRecords, "\(found.stdout)")

        let (repaired, repair) = try await verify(0, ["--repair"])
        #expect(repaired.exitCode == 0, "\(repaired)")
        #expect((repair["repair"] as? [String: Any])?["deleted_unknown"] as? Int == victimRecords, "\(repaired.stdout)")
        let after = try Export.records(try await ws.export(target(0)))
        #expect(!after.contains { $0.documentKey == victim }, "the lost state's leftover is deleted")
        #expect(after.count == loaded.count - victimRecords, "nothing else is deleted")
        for index in 0..<count {
            let (result, _) = try await verify(index)
            #expect(result.exitCode == 0, "shard \(index) after the repair: \(result)")
        }
    }
}
