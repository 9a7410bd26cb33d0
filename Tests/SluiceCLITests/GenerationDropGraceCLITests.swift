import Foundation
import SluiceTesting
import Testing

/// A generation switched away from is not deleted before servers have followed the switch (session 47's
/// campaign: `promote` then `drop --previous` at once failed `sluice serve`'s searches with "relation does
/// not exist" on pgvector and emptied its document listings on the local store, in the second before the
/// server looked at the manifest again). The drop waits until `GenerationManifest.followGrace` (5 s) after
/// the switch; the test checks the order of the two moments, not a duration of its own.
@Suite(.serialized)
struct GenerationDropGraceCLITests {
    @Test("drop --previous right after a promote deletes the previous generation no sooner than 5 s after the switch")
    func dropWaitsForServersToFollow() async throws {
        let ws = try Workspace("generation-drop-grace")
        defer { ws.cleanUp() }
        try Corpus.write(count: 6, into: ws.corpus, seed: 0x6E_0047)
        let main = ws.target("main")
        try await GenerationCLITests.buildAndPromoteCandidate(ws, main)
        let manifest = try #require(
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: main.state.appendingPathComponent("generations.json"))
            )
                as? [String: Any]
        )
        let switchedAt = try #require(
            manifest["switched_at"] as? Double ?? manifest["switchedAt"] as? Double,
            "\(manifest)"
        )
        // The previous generation (g0) is the base folder's own files.
        let previousData = main.index.appendingPathComponent("data.mdb")
        #expect(FileManager.default.fileExists(atPath: previousData.path))
        let drop = try ws.start(["generation", "drop", "--previous", ws.pipeline.path] + main.arguments)
        var gone: Double?
        let deadline = ContinuousClock.now + .seconds(120)
        while gone == nil, ContinuousClock.now < deadline {
            if !FileManager.default.fileExists(atPath: previousData.path) { gone = Date().timeIntervalSince1970 }
            try await Task.sleep(for: .milliseconds(20))
        }
        let result = try await drop.wait(timeout: .seconds(120))
        #expect(result.exitCode == 0, "\(result)")
        let deleted = try #require(gone, "the previous generation was not deleted")
        #expect(deleted - switchedAt >= 4.9, "deleted \(deleted - switchedAt) s after the switch")
    }
}
