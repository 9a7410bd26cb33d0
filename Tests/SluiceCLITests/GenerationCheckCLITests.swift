import Foundation
import SluiceCore
import Testing

/// `sluice check` and index generations (issue 32, "check says when a candidate is pending"): a pending
/// candidate is a `generations` line with what it changes and how to finish it; a manifest that cannot be
/// read fails the check (exit 1) instead of being taken for "no generations".
@Suite(.serialized)
struct GenerationCheckCLITests {
    @Test("check names a pending candidate and its settings, says nothing without one, and fails on a damaged manifest")
    func checkSaysWhenACandidateIsPending() async throws {
        let ws = try Workspace("generation-check")
        defer { ws.cleanUp() }
        try Corpus.write(count: 4, into: ws.corpus, seed: 0x6E_0040)
        let main = ws.target("main")
        try await ws.run(main, expecting: 0)
        let check = ["check", ws.pipeline.path] + main.arguments + ["--source", ws.corpus.path]

        let before = try await ws.sluice(check)
        #expect(before.exitCode == 0, "\(before)")
        #expect(!before.stdout.contains("generations"), "\(before)")

        let started = try await GenerationCLITests.generation(ws, "start", main, GenerationCLITests.candidateSettings)
        #expect(started.exitCode == 0, "\(started)")
        let pending = try await ws.sluice(check)
        #expect(pending.exitCode == 0, "\(pending)")
        let line = try #require(pending.stdout.split(separator: "\n").first { $0.contains("generations") })
        #expect(line.hasPrefix("ok "), "\(pending)")
        #expect(line.contains("candidate g1"), "\(pending)")
        #expect(line.contains("chunk.max_tokens=64"), "\(pending)")
        #expect(line.contains("active g0"), "\(pending)")
        #expect(pending.stdout.contains("sluice generation promote"), "\(pending)")

        let json = try await ws.sluice(check + ["--json"])
        #expect(json.exitCode == 0, "\(json)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let lines = try #require(object["checks"] as? [[String: Any]], "\(json)")
        let entry = try #require(lines.first { $0["subject"] as? String == "generations" }, "\(json)")
        #expect(entry["outcome"] as? String == "ok")

        try Data("{not json".utf8).write(to: main.state.appendingPathComponent("generations.json"))
        let damaged = try await ws.sluice(check)
        #expect(damaged.exitCode == 1, "\(damaged)")
        let failed = try #require(damaged.stdout.split(separator: "\n").first { $0.contains("generations") })
        #expect(failed.hasPrefix("failed "), "\(damaged)")
        #expect(damaged.stdout.contains("generations.json"), "\(damaged)")
    }
}
