import Foundation
import Testing

/// Index generations in a sharded deployment (docs/GENERATIONS.md, "Sharded deployments"): three shards, each
/// with its own state, one local store. Every shard builds its part of the candidate; promote is refused until
/// every part is complete (a shard killed during its build included), then switches once for all: every
/// shard's state reads the new generation, equal to a from-scratch build, and a rollback restores the old one.
@Suite(.serialized)
struct GenerationShardsCLITests {
    static let count = 3

    /// `sluice run --shard K/3` of `target`.
    static func run(
        _ ws: Workspace,
        _ target: Workspace.Target,
        _ shard: Int,
        _ extra: [String] = [],
        environment: [String: String?] = [:]
    ) async throws -> CommandResult {
        try await ws.sluice(
            ws.runArguments(target, ["--shard", "\(shard)/\(count)"] + extra),
            environment: environment
        )
    }

    @Test(
        "each shard builds its part of the candidate; promote refused until every part is complete, a shard killed mid-build included; one switch for all shards"
    )
    func shardsBuildTheirPartsThenOneSwitch() async throws {
        let ws = try Workspace("generation-shards")
        defer { ws.cleanUp() }
        try Corpus.write(count: 12, into: ws.corpus, seed: 0x6E_0050)
        let store = ws.root.appendingPathComponent("shared-index")
        let shards = (0..<Self.count).map { Workspace.Target(state: ws.target("shard\($0)").state, index: store) }
        for (index, shard) in shards.enumerated() {
            let result = try await Self.run(ws, shard, index)
            #expect(result.exitCode == 0, "\(result)")
        }
        let before = try await ws.export(shards[0])

        // Started with shard 1's state: the deployment's one manifest is beside the store.
        let started = try await GenerationCLITests.generation(
            ws,
            "start",
            shards[1],
            GenerationCLITests.candidateSettings
        )
        #expect(started.exitCode == 0, "\(started)")
        #expect(
            FileManager.default.fileExists(
                atPath: store.appendingPathComponent("generations/shared/generations.json").path
            )
        )
        for index in [0, 1] {
            let result = try await Self.run(ws, shards[index], index)
            #expect(result.exitCode == 0, "\(result)")
        }
        let missingOne = try await GenerationCLITests.generation(ws, "promote", shards[0])
        #expect(missingOne.exitCode == 8, "\(missingOne)")
        #expect(missingOne.stderr.contains("shard 2/3"), "\(missingOne)")

        // Shard 2 killed while it builds its part (its active generation has nothing to do: the first
        // writes are the candidate's).
        let killed = try await Self.run(
            ws,
            shards[2],
            2,
            ["--set", "sink.batch=4"],
            environment: ["SLUICE_DEBUG_CRASH_AT": "local.upsert-committed@2"]
        )
        CrashWindowCLITests.expectKilled(killed)
        let afterKill = try await GenerationCLITests.generation(ws, "promote", shards[1])
        #expect(afterKill.exitCode == 8, "\(afterKill)")
        #expect(afterKill.stderr.contains("shard 2/3"), "\(afterKill)")
        for shard in shards {
            expectSameExport(try await ws.export(shard), before, "refused promotes changed nothing")
        }

        // The same command resumes; then one promote switches every shard's state.
        let resumed = try await Self.run(ws, shards[2], 2)
        #expect(resumed.exitCode == 0, "\(resumed)")
        let promoted = try await GenerationCLITests.generation(ws, "promote", shards[2])
        #expect(promoted.exitCode == 0, "\(promoted)")
        let reference = ws.target("reference")
        try await ws.run(reference, GenerationCLITests.candidateSettings, expecting: 0)
        let rebuilt = try await ws.export(reference)
        #expect(rebuilt != before, "the two chunkings gave the same export: the test proves nothing")
        for (index, shard) in shards.enumerated() {
            expectSameExport(try await ws.export(shard), rebuilt, "shard \(index)'s state after the one switch")
        }
        // Runs after the switch keep the new generation as it is.
        for (index, shard) in shards.enumerated() {
            let result = try await Self.run(ws, shard, index)
            #expect(result.exitCode == 0, "\(result)")
        }
        expectSameExport(try await ws.export(shards[0]), rebuilt, "after every shard ran again")

        let rolledBack = try await GenerationCLITests.generation(ws, "rollback", shards[0])
        #expect(rolledBack.exitCode == 0, "\(rolledBack)")
        for (index, shard) in shards.enumerated() {
            expectSameExport(try await ws.export(shard), before, "shard \(index)'s state after the rollback")
        }
        // The rolled-back generation is a candidate again: its parts are built again before a promote.
        let stale = try await GenerationCLITests.generation(ws, "promote", shards[0])
        #expect(stale.exitCode == 8, "\(stale)")
    }

    @Test("a shard run with another shard count than the deployment's generations is refused (exit 1)")
    func otherShardCountRefused() async throws {
        let ws = try Workspace("generation-shards-count")
        defer { ws.cleanUp() }
        try Corpus.write(count: 4, into: ws.corpus, seed: 0x6E_0051)
        let store = ws.root.appendingPathComponent("shared-index")
        let first = Workspace.Target(state: ws.target("a").state, index: store)
        #expect(try await Self.run(ws, first, 0).exitCode == 0)
        #expect(
            try await GenerationCLITests.generation(ws, "start", first, GenerationCLITests.candidateSettings).exitCode
                == 0
        )
        let other = Workspace.Target(state: ws.target("b").state, index: store)
        let refused = try await ws.sluice(ws.runArguments(other, ["--shard", "1/2"]))
        #expect(refused.exitCode == 1, "\(refused)")
        #expect(refused.stderr.contains("3 shards"), "\(refused)")
    }
}
