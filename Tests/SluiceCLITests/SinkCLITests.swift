import Foundation
import SluiceCore
import SluiceTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Every sink through the `sluice` binary, against real servers (PostgreSQL+pgvector, Chroma) or
/// validating stand-ins (Qdrant, Pinecone; with injected transient faults on every few writes): a full
/// run, search, sink info, an incremental run with an edit, a deletion and an addition, kill -9 and
/// resume, verify and repair, and drop. End states are compared through `sluice export`.
@Suite(.serialized)
struct SinkCLITests {
    @Test(
        "full, incremental, kill -9/resume, verify --repair and drop leave every sink equal to a fresh run",
        arguments: StoreUnderTest.Kind.allCases
    )
    func lifecycle(kind: StoreUnderTest.Kind) async throws {
        let ws = try Workspace("sink-\(kind.rawValue)")
        defer { ws.cleanUp() }
        let store = try await StoreUnderTest.start(kind, in: ws, faultEvery: 5)
        defer { store.stop() }
        var keys = try Corpus.write(count: 40, into: ws.corpus, seed: 0x5EED_0600)

        // 1. Full run: the store holds what the local store holds.
        let local = ws.target("local")
        try await ws.run(local, expecting: 0)
        let localExport = try await ws.export(local)
        let main = store.target(ws, "main")
        try await ws.run(main, expecting: 0)
        let mainExport = try await ws.export(main)
        try expectSameRecords(mainExport, localExport, exact: kind.exactVectors, "\(kind) vs. the local store")
        let records = try Export.records(mainExport)
        #expect(records.count > 40)

        // Vector search: the store's own query ranks like the local store's exact search.
        let query = try #require(records.first?.text.split(separator: " ").prefix(8).joined(separator: " "))
        let localHits = try await ws.sluice(
            ["search", query, "--json", "-k", "3", "--mode", "vector", ws.pipeline.path] + local.arguments
        )
        let storeHits = try await ws.sluice(
            ["search", query, "--json", "-k", "3", "--mode", "vector", ws.pipeline.path] + main.arguments
        )
        #expect(storeHits.exitCode == 0, "\(storeHits)")
        let storeScores = Self.field("score", storeHits.stdout).compactMap { $0 as? Double }
        let localScores = Self.field("score", localHits.stdout).compactMap { $0 as? Double }
        #expect(storeScores.count == 3)
        // Equal scores in the same order (ties may list different chunks with the same text).
        #expect(
            zip(storeScores, localScores).allSatisfy { abs($0 - $1) < 1e-4 },
            "\(storeScores) vs. the local store's \(localScores)"
        )
        #expect(storeScores == storeScores.sorted(by: >))

        // sink info: count, dimension, metric.
        let info = try await ws.sluice(["sink", "info", "--json", ws.pipeline.path] + main.arguments)
        #expect(info.exitCode == 0, "\(info)")
        let infoObject = try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [String: Any]
        #expect((infoObject?["count"] as? Int) == records.count)
        #expect((infoObject?["dimensions"] as? Int) == 48)
        #expect((infoObject?["metric"] as? String)?.hasPrefix("cosine") == true)

        // 2. Incremental: edit one, delete one, add one, --prune; equals a fresh run over the final corpus.
        var rng = SeededGenerator(seed: 0x600D)
        let edited = keys[3]
        try Corpus.write(
            Corpus.document(index: 7001, markdown: edited.hasSuffix(".md"), bytes: 5_000, rng: &rng),
            to: ws.corpus.appendingPathComponent(edited)
        )
        let deleted = keys[11]
        try FileManager.default.removeItem(at: ws.corpus.appendingPathComponent(deleted))
        let added = "notes/added-0600.txt"
        try Corpus.write(
            Corpus.document(index: 7002, markdown: false, bytes: 4_000, rng: &rng),
            to: ws.corpus.appendingPathComponent(added)
        )
        keys = keys.filter { $0 != deleted } + [added]
        try await ws.run(main, ["--prune"], expecting: 0)
        let fresh = store.target(ws, "fresh")
        try await ws.run(fresh, expecting: 0)
        let freshExport = try await ws.export(fresh)
        expectSameExport(try await ws.export(main), freshExport, "\(kind): incremental vs. fresh")
        #expect(!(try Export.records(freshExport)).contains { $0.documentKey == deleted })

        // 3. kill -9 at moments spread over a slow run, then resume: equals the fresh run. Slow stores get
        // the kills at 150, 400 and 800 ms; when the slow run is over sooner than 1.5 s here (an idle
        // machine, a fast sink), at fractions of how long it took, so that the kills land inside it.
        var delays: [Duration] = [.milliseconds(150), .milliseconds(400), .milliseconds(800)]
        let timed = try ws.start(ws.runArguments(store.target(ws, "timing"), slowRunSettings))
        try #require(
            await timed.waitForStderr(containing: "run started", timeout: .seconds(600)),
            "\(timed.stderrSoFar)"
        )
        let begun = ContinuousClock.now
        while timed.isRunning && ContinuousClock.now - begun < .milliseconds(1500) {
            try await Task.sleep(for: .milliseconds(5))
        }
        if timed.isRunning {
            timed.send(SIGKILL)
        } else {
            let runTime = ContinuousClock.now - begun
            delays = [runTime * 0.15, runTime * 0.4, runTime * 0.7]
        }
        _ = try await timed.wait(timeout: .seconds(60))
        // The machine's speed can change between the timing run and these (other processes share the
        // cores): when a run ends before its kill, the target is complete and later kills land in no-op
        // runs, so the series starts again on a new target with the delays halved.
        var crashed = store.target(ws, "crashed")
        var kills = 0
        for attempt in 0..<4 where kills < 2 {
            if attempt > 0 { crashed = store.target(ws, "crashed\(attempt)") }
            kills = 0
            for delay in delays {
                let process = try ws.start(ws.runArguments(crashed, slowRunSettings))
                let started = await process.waitForStderr(containing: "run started", timeout: .seconds(600))
                try #require(started, "\(process.stderrSoFar)")
                try await Task.sleep(for: delay)
                process.send(SIGKILL)
                let result = try await process.wait(timeout: .seconds(60))
                if result.signaled {
                    kills += 1
                } else {
                    #expect(result.exitCode == 0, "a run meant to be killed ended on its own, but not well: \(result)")
                    break
                }
            }
            delays = delays.map { $0 / 2 }
        }
        if kills < 2 {
            // Under a heavy load (the whole suite at once) this process's timers can fire seconds late, after
            // a fast store's run is over: then the kills land at named points of the run instead, which no
            // timer decides (docs/RELIABILITY.md lists them), on a target of their own.
            crashed = store.target(ws, "crashedatpoints")
            kills = 0
            for point in ["upsert.sink-written@2", "commit.committed@3", "upsert.pending-recorded@4"] {
                let result = try await ws.sluice(
                    ws.runArguments(crashed, slowRunSettings),
                    environment: ["SLUICE_DEBUG_CRASH_AT": point],
                    timeout: .seconds(120)
                )
                if result.signaled && result.status == SIGKILL { kills += 1 }
            }
        }
        #expect(kills >= 2, "neither the timed kills nor the named points landed inside a run")
        try await ws.run(crashed, expecting: 0)
        expectSameExport(try await ws.export(crashed), freshExport, "\(kind): resumed after \(kills) kills vs. fresh")

        // 4. verify: vectors deleted behind the checkpoint's back, and vectors it does not know.
        try await expectVerifyRepairs(ws, store, main, expected: freshExport, keys: keys)

        // 5. drop, then a run loads everything again.
        let drop = try await ws.sluice(["sink", "drop", "--yes", ws.pipeline.path] + crashed.arguments)
        #expect(drop.exitCode == 0, "\(drop)")
        let afterDrop = try await ws.sluice(["sink", "info", "--json", ws.pipeline.path] + crashed.arguments)
        let dropped = try JSONSerialization.jsonObject(with: Data(afterDrop.stdout.utf8)) as? [String: Any]
        #expect((dropped?["count"] as? Int) == 0, "\(afterDrop)")
        try await ws.run(crashed, expecting: 0)
        expectSameExport(try await ws.export(crashed), freshExport, "\(kind): reloaded after drop vs. fresh")

        if kind == .qdrant || kind == .pinecone || kind == .chroma {
            let stats = try store.standInStats()
            #expect((stats["faults"] ?? 0) > 0, "no fault was injected: \(stats)")
            #expect(stats["invalid"] == 0, "requests the stand-in found invalid: \(stats)")
            if kind == .qdrant { #expect((stats["max_batch"] ?? 0) <= 256) }
            if kind == .pinecone { #expect((stats["max_body_bytes"] ?? 0) <= 2 * 1024 * 1024) }
        }
    }

    /// Damages the store of `target` through other state folders sharing its sink, then checks that
    /// `verify` reports it (exit 2) and `verify --repair` restores `expected` without embedding anything.
    private func expectVerifyRepairs(
        _ ws: Workspace,
        _ store: StoreUnderTest,
        _ target: Workspace.Target,
        expected: Data,
        keys: [String]
    ) async throws {
        let clean = try await ws.sluice(["verify", ws.pipeline.path] + target.arguments)
        #expect(clean.exitCode == 0 && clean.stdout.contains("consistent"), "\(clean)")

        // Missing: another state indexes one document into the same sink, then prunes it (deleting its vectors).
        let victim = keys[5]
        let side = ws.root.appendingPathComponent("side-corpus")
        try FileManager.default.createDirectory(
            at: side.appendingPathComponent(victim).deletingLastPathComponent(),
            withIntermediateDirectories: true
        )
        try FileManager.default.copyItem(
            at: ws.corpus.appendingPathComponent(victim),
            to: side.appendingPathComponent(victim)
        )
        let other = store.target(ws, "other", sinkName: "main")
        let sideRun = ["run", ws.pipeline.path] + other.arguments + ["--source", side.path, "--quiet"]
        #expect(try await ws.sluice(sideRun).exitCode == 0)
        try FileManager.default.removeItem(at: side.appendingPathComponent(victim))
        // Unknown: an extra document only the other state knows.
        try Corpus.write(
            "An extra document that only the other state knows about.\n\nIt has two paragraphs.\n",
            to: side.appendingPathComponent("extra.txt")
        )
        let prune = try await ws.sluice(sideRun + ["--prune", "--allow-mass-delete"])
        #expect(prune.exitCode == 0, "\(prune)")

        let damaged = try await ws.sluice(["verify", ws.pipeline.path] + target.arguments)
        #expect(damaged.exitCode == 2, "\(damaged)")
        #expect(damaged.stdout.contains("missing  \(victim)"), "\(damaged.stdout)")
        #expect(!damaged.stdout.contains("unknown to the checkpoint: 0 vectors"), "\(damaged.stdout)")

        let repair = try await ws.sluice(["verify", "--repair", ws.pipeline.path] + target.arguments)
        #expect(repair.exitCode == 0, "\(repair)")
        #expect(repair.stdout.contains("(0 chunks embedded"), "repair paid for embeddings again: \(repair.stdout)")
        expectSameExport(try await ws.export(target), expected, "\(store.kind): repaired vs. fresh")
        let after = try await ws.sluice(["verify", ws.pipeline.path] + target.arguments)
        #expect(after.exitCode == 0, "\(after)")
    }

    static func field(_ name: String, _ jsonLines: String) -> [Any] {
        jsonLines.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?[name]
        }
    }
}
