import Foundation
import SluiceCore
import Testing

extension SluiceCLITests {
    // MARK: Sharding (docs/DESIGN.md §8)

    @Test(
        "N shards with their own states and one shared sink, run at once, equal one unsharded run; prune and re-runs stay within a shard"
    )
    func shardsEqualOneRun() async throws {
        let ws = try Workspace("shards")
        defer { ws.cleanUp() }
        let keys = try Corpus.write(count: 36, into: ws.corpus, seed: 0x5EED_0051)
        let whole = ws.target("whole")
        try await ws.run(whole, expecting: 0)
        let expected = try await ws.export(whole)

        let count = 3
        let sharedIndex = ws.root.appendingPathComponent("shared-index")
        func arguments(_ index: Int, _ extra: [String] = []) -> [String] {
            let state = ws.root.appendingPathComponent("shard-state-\(index)")
            return [
                "run", ws.pipeline.path, "--state", state.path, "--set", "sink.path=\(sharedIndex.path)", "--source",
                ws.corpus.path, "--quiet", "--shard", "\(index)/\(count)",
            ] + extra
        }
        let shared = Workspace.Target(state: ws.root.appendingPathComponent("shard-state-0"), index: sharedIndex)

        // All shards at once, as a Kubernetes Indexed Job would run them.
        let processes = try (0..<count).map { try ws.start(arguments($0)) }
        for (index, process) in processes.enumerated() {
            let result = try await process.wait(timeout: .seconds(60))
            #expect(result.exitCode == 0, "shard \(index): \(result)")
        }
        expectSameExport(try await ws.export(shared), expected, "three shards vs. one run")

        var owned = 0
        for index in 0..<count {
            let state = Workspace.Target(
                state: ws.root.appendingPathComponent("shard-state-\(index)"),
                index: sharedIndex
            )
            let mine = try keys.filter { try Shard(index: index, count: count).owns($0) }
            #expect(!mine.isEmpty)
            #expect(try await ws.status(state).documents == ["indexed": mine.count], "shard \(index)")
            owned += mine.count
        }
        #expect(owned == keys.count)

        // A vanished document is pruned by its own shard only.
        let victim = keys[5]
        let owner = try (0..<count).first { try Shard(index: $0, count: count).owns(victim) }!
        let other = (owner + 1) % count
        try FileManager.default.removeItem(at: ws.corpus.appendingPathComponent(victim))
        let otherRun = try await ws.sluice(arguments(other, ["--prune"]))
        #expect(otherRun.exitCode == 0, "\(otherRun)")
        #expect(
            try Export.records(try await ws.export(shared)).contains { $0.documentKey == victim },
            "another shard pruned a document it does not own"
        )
        let ownerRun = try await ws.sluice(arguments(owner, ["--prune"]))
        #expect(ownerRun.exitCode == 0, "\(ownerRun)")
        try FileManager.default.removeItem(at: ws.corpus.appendingPathComponent(keys[6]))
        try await ws.run(whole, ["--prune"], expecting: 0)
        for index in 0..<count where index != owner {
            let result = try await ws.sluice(arguments(index, ["--prune"]))
            #expect(result.exitCode == 0, "\(result)")
        }
        let ownerAgain = try await ws.sluice(arguments(owner, ["--prune"]))
        #expect(ownerAgain.exitCode == 0, "\(ownerAgain)")
        expectSameExport(try await ws.export(shared), try await ws.export(whole), "shards vs. one run after deletions")
    }

    @Test(
        "a state belongs to one shard of one sharding: another K/N, no shard, --reembed with a shard and bad specs exit 1"
    )
    func shardMisuseIsRefused() async throws {
        let ws = try Workspace("shard-misuse")
        defer { ws.cleanUp() }
        try Corpus.write(count: 10, into: ws.corpus, seed: 0x5EED_0052)
        let main = ws.target("main")
        try await ws.run(main, ["--shard", "1/2"], expecting: 0)
        let exported = try await ws.export(main)

        for extra in [
            ["--shard", "1/3"], ["--shard", "0/2"], [], ["--shard", "1/2", "--reembed"], ["--shard", "2/2"],
            ["--shard", "one"],
        ] {
            let result = try await ws.run(main, extra)
            #expect(result.exitCode == 1, "\(extra): \(result)")
            #expect(result.stderr.contains("shard"), "\(extra): \(result)")
        }
        expectSameExport(try await ws.export(main), exported, "after refused runs")
        try await ws.run(main, ["--shard", "1/2"], expecting: 0)

        // An unsharded state refuses to become a shard.
        let plain = ws.target("plain")
        try await ws.run(plain, expecting: 0)
        let result = try await ws.run(plain, ["--shard", "0/2"])
        #expect(result.exitCode == 1, "\(result)")
    }
}

extension SluiceCLITests {
    @Test(
        "shards sharing a local store save its graph at the same moment: neither removes the other's save in progress"
    )
    func shardsSaveTheGraphTogether() async throws {
        // Seen once in the suite: shard 1 exited 70, "rename to …/hnsw-3.index: No such file or directory",
        // because another shard's save removed every `hnsw-` file but its own, the temporary one included.
        let ws = try Workspace("shards-graph")
        defer { ws.cleanUp() }
        _ = try Corpus.write(count: 24, into: ws.corpus, seed: 0x5EED_0052)
        let sharedIndex = ws.root.appendingPathComponent("shared-index")
        func arguments(_ index: Int) -> [String] {
            [
                "run", ws.pipeline.path, "--state", ws.root.appendingPathComponent("shard-state-\(index)").path,
                "--set", "sink.path=\(sharedIndex.path)", "--set", "sink.hnsw.exact_below=0",  // a graph for 24
                "--source", ws.corpus.path, "--quiet", "--shard", "\(index)/2",
            ]
        }
        // Shard 0 holds between writing its graph's temporary file and renaming it; shard 1 runs to its end,
        // saving its own graph meanwhile.
        let resume = ws.root.appendingPathComponent("resume")
        let held = try ws.start(
            arguments(0),
            environment: [
                "SLUICE_DEBUG_PAUSE_INDEX": sharedIndex.lastPathComponent, "SLUICE_DEBUG_RESUME": resume.path,
            ]
        )
        let paused = await held.waitForStderr(containing: "sluice-debug: paused at INDEX", timeout: .seconds(600))
        try #require(paused, "never paused: \(held.stderrSoFar)")
        let other = try await ws.sluice(arguments(1), environment: ["SLUICE_DEBUG_PAUSE_INDEX": nil])
        #expect(other.exitCode == 0, "shard 1: \(other)")
        _ = FileManager.default.createFile(atPath: resume.path, contents: Data())
        let first = try await held.wait(timeout: .seconds(120))
        #expect(first.exitCode == 0, "shard 0, its save held while shard 1 saved: \(first)")

        // One saved graph is left, no temporary file, and a search by the graph answers.
        let files = try FileManager.default.contentsOfDirectory(atPath: sharedIndex.path).filter {
            $0.hasPrefix("hnsw-")
        }
        #expect(files.count == 1 && files[0].hasSuffix(".index"), "\(files)")
        let shared = Workspace.Target(state: ws.root.appendingPathComponent("shard-state-0"), index: sharedIndex)
        let search = try await ws.sluice(["search", "river", ws.pipeline.path, "--mode", "vector"] + shared.arguments)
        #expect(search.exitCode == 0 && !search.stdout.isEmpty, "\(search)")
    }
}
