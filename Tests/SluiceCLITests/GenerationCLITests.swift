import Foundation
import SluiceCore
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Index generations on the local store (docs/GENERATIONS.md): a candidate with other chunk settings built
/// beside the active index by ordinary runs, kept current with it, switched atomically, rolled back byte for
/// byte. Each end state is compared with a reference built from scratch with the same settings.
@Suite(.serialized)
struct GenerationCLITests {
    /// The candidate's settings in these tests: another chunking (the hash embedder stays).
    static let candidateSettings = ["--set", "chunk.max_tokens=64"]

    /// `sluice generation SUBCOMMAND PIPELINE TARGET EXTRA…`
    static func generation(
        _ ws: Workspace,
        _ subcommand: String,
        _ target: Workspace.Target,
        _ extra: [String] = [],
        environment: [String: String?] = [:]
    ) async throws -> CommandResult {
        try await ws.sluice(
            ["generation", subcommand, ws.pipeline.path] + target.arguments + extra,
            environment: environment
        )
    }

    /// `target` built, a candidate with ``candidateSettings`` started, built and promoted (without the gate).
    static func buildAndPromoteCandidate(_ ws: Workspace, _ target: Workspace.Target) async throws {
        try await ws.run(target, expecting: 0)
        try await startBuildAndPromote(ws, target, candidateSettings)
    }

    /// Starts a candidate with `settings`, builds it with a run and promotes it (no quality gate).
    static func startBuildAndPromote(_ ws: Workspace, _ target: Workspace.Target, _ settings: [String]) async throws {
        let started = try await generation(ws, "start", target, settings)
        try #require(started.exitCode == 0, "\(started)")
        try await ws.run(target, expecting: 0)
        let promoted = try await generation(ws, "promote", target, ["--skip-eval"])
        try #require(promoted.exitCode == 0, "\(promoted)")
    }

    /// The export of a target built from scratch on the corpus as it is now, with `settings`.
    static func reference(_ ws: Workspace, _ name: String, _ settings: [String] = []) async throws -> Data {
        let target = ws.target(name)
        try await ws.run(target, settings, expecting: 0)
        return try await ws.export(target)
    }

    static func search(_ ws: Workspace, _ target: Workspace.Target, _ query: String) async throws -> String {
        let result = try await ws.sluice(["search", query, "--json", "-k", "5", ws.pipeline.path] + target.arguments)
        try #require(result.exitCode == 0, "\(result)")
        return result.stdout
    }

    @Test("runs keep the active generation and the candidate current; promote switches every reader to the candidate")
    func candidateKeptCurrentThenPromoted() async throws {
        let ws = try Workspace("generation-current")
        defer { ws.cleanUp() }
        let keys = try Corpus.write(count: 12, into: ws.corpus, seed: 0x6E_0032)
        let main = ws.target("main")
        try await ws.run(main, expecting: 0)

        let started = try await Self.generation(ws, "start", main, Self.candidateSettings)
        #expect(started.exitCode == 0, "\(started)")
        try await ws.run(main, expecting: 0)  // builds the candidate

        // Changes made while the candidate exists: one added, one changed, one deleted (--prune).
        try Corpus.write(
            "A note added while the candidate was built.\n",
            to: ws.corpus.appendingPathComponent("added.txt")
        )
        try Corpus.write("This text replaced the first document.\n", to: ws.corpus.appendingPathComponent(keys[0]))
        try FileManager.default.removeItem(at: ws.corpus.appendingPathComponent(keys[1]))
        try await ws.run(main, ["--prune", "--allow-mass-delete"], expecting: 0)

        // Readers use the active generation, which took the changes in its own chunking.
        let oldChunking = try await Self.reference(ws, "reference-old")
        expectSameExport(try await ws.export(main), oldChunking, "the active generation before the promote")
        let status = try await Self.generation(ws, "status", main)
        #expect(status.stdout.contains("active: g0") && status.stdout.contains("candidate: g1"), "\(status)")
        #expect(status.stdout.contains("chunk.max_tokens=64"), "\(status)")

        let promoted = try await Self.generation(ws, "promote", main)
        #expect(promoted.exitCode == 0, "\(promoted)")
        let newChunking = try await Self.reference(ws, "reference-new", Self.candidateSettings)
        expectSameExport(try await ws.export(main), newChunking, "the promoted candidate")
        #expect(oldChunking != newChunking, "the two chunkings gave the same export: the test proves nothing")
        let verified = try await ws.sluice(["verify", ws.pipeline.path] + main.arguments)
        #expect(verified.exitCode == 0, "\(verified)")

        // The promoted generation keeps its settings: later runs go on in its chunking.
        try Corpus.write("Another note, after the promote.\n", to: ws.corpus.appendingPathComponent("later.txt"))
        try await ws.run(main, expecting: 0)
        let later = try await Self.reference(ws, "reference-later", Self.candidateSettings)
        expectSameExport(try await ws.export(main), later, "a run after the promote")
    }

    @Test(
        "a change of chunk settings in the pipeline file is refused once generations are in use (nothing re-chunked in place)"
    )
    func settingsChangeRefused() async throws {
        let ws = try Workspace("generation-refuse")
        defer { ws.cleanUp() }
        try Corpus.write(count: 4, into: ws.corpus, seed: 0x6E_0033)
        let main = ws.target("main")
        try await ws.run(main, expecting: 0)
        #expect(try await Self.generation(ws, "start", main, Self.candidateSettings).exitCode == 0)
        try await ws.run(main, expecting: 0)
        let before = try await ws.export(main)
        // The dry run refuses it as the run does (it said the documents would be written again: session 46's
        // campaign, seen failing).
        let dry = try await ws.run(main, ["--dry-run", "--set", "chunk.max_tokens=100"], expecting: 1)
        #expect(dry.stderr.contains("sluice generation start"), "\(dry)")
        let refused = try await ws.run(main, ["--set", "chunk.max_tokens=100"], expecting: 1)
        #expect(refused.stderr.contains("sluice generation start"), "\(refused)")
        expectSameExport(try await ws.export(main), before, "after the refused run")
    }

    @Test(
        "kill -9 while the candidate is built: promote is refused (exit 8, nothing changed); the same command resumes"
    )
    func killDuringBuildThenResume() async throws {
        let ws = try Workspace("generation-kill-build")
        defer { ws.cleanUp() }
        try Corpus.write(count: 24, into: ws.corpus, seed: 0x6E_0034)
        let main = ws.target("main")
        try await ws.run(main, expecting: 0)
        let active = try await ws.export(main)
        let answers = try await Self.search(ws, main, "configuration file")
        #expect(try await Self.generation(ws, "start", main, Self.candidateSettings).exitCode == 0)

        // The active generation has nothing to do: the store writes of this run are the candidate's.
        let partial = try await ws.sluice(
            ws.runArguments(main, ["--set", "sink.batch=4"]),
            environment: ["SLUICE_DEBUG_CRASH_AT": "local.upsert-committed@5"]
        )
        CrashWindowCLITests.expectKilled(partial)

        let refused = try await Self.generation(ws, "promote", main)
        #expect(refused.exitCode == 8, "\(refused)")
        #expect(refused.stderr.contains("incomplete"), "\(refused)")
        expectSameExport(try await ws.export(main), active, "after the refused promote")
        #expect(try await Self.search(ws, main, "configuration file") == answers, "a refused promote changed answers")

        try await ws.run(main, ["--set", "sink.batch=4"], expecting: 0)  // the same command resumes the candidate
        #expect(try await Self.generation(ws, "promote", main).exitCode == 0)
        let reference = try await Self.reference(ws, "reference", Self.candidateSettings)
        expectSameExport(try await ws.export(main), reference, "the candidate resumed after kill -9")
    }

    @Test(
        "kill -9 during promote: the old generation or the new one is in force, never a mix; promoting again ends as without the kill",
        arguments: ["generations.promote-checked", "generations.manifest-written", "generations.manifest-renamed"]
    )
    func killDuringPromote(_ point: String) async throws {
        let ws = try Workspace("generation-kill-promote")
        defer { ws.cleanUp() }
        try Corpus.write(count: 8, into: ws.corpus, seed: 0x6E_0035)
        let main = ws.target("main")
        try await ws.run(main, expecting: 0)
        let old = try await ws.export(main)
        #expect(try await Self.generation(ws, "start", main, Self.candidateSettings).exitCode == 0)
        try await ws.run(main, expecting: 0)

        let crashed = try await Self.generation(ws, "promote", main, environment: ["SLUICE_DEBUG_CRASH_AT": point])
        CrashWindowCLITests.expectKilled(crashed)
        let after = try await ws.export(main)
        let switched = point == "generations.manifest-renamed"
        if switched {
            #expect(after != old, "the rename was done: the candidate must be active")
        } else {
            expectSameExport(after, old, "killed before the rename: the old generation stays active")
            #expect(try await Self.generation(ws, "promote", main).exitCode == 0)
        }
        let reference = try await Self.reference(ws, "reference", Self.candidateSettings)
        expectSameExport(try await ws.export(main), reference, "after the promote")
        let status = try await Self.generation(ws, "status", main)
        #expect(status.stdout.contains("active: g1") && status.stdout.contains("previous: g0"), "\(status)")
    }

    @Test(
        "rollback restores the previous generation's search answers byte for byte; promote again restores the new ones"
    )
    func rollbackRestoresAnswers() async throws {
        let ws = try Workspace("generation-rollback")
        defer { ws.cleanUp() }
        try Corpus.write(count: 10, into: ws.corpus, seed: 0x6E_0036)
        let main = ws.target("main")
        try await ws.run(main, expecting: 0)
        let queries = ["configuration file", "error message", "install the package"]
        var before: [String] = []
        for query in queries { before.append(try await Self.search(ws, main, query)) }
        let oldExport = try await ws.export(main)

        #expect(try await Self.generation(ws, "start", main, Self.candidateSettings).exitCode == 0)
        try await ws.run(main, expecting: 0)
        #expect(try await Self.generation(ws, "promote", main).exitCode == 0)
        var promoted: [String] = []
        for query in queries { promoted.append(try await Self.search(ws, main, query)) }
        #expect(promoted != before, "the candidate answers as the old generation: the test proves nothing")

        let rolledBack = try await Self.generation(ws, "rollback", main)
        #expect(rolledBack.exitCode == 0, "\(rolledBack)")
        for (index, query) in queries.enumerated() {
            #expect(try await Self.search(ws, main, query) == before[index], "answers to '\(query)' after rollback")
        }
        expectSameExport(try await ws.export(main), oldExport, "after the rollback")

        #expect(try await Self.generation(ws, "promote", main).exitCode == 0)
        for (index, query) in queries.enumerated() {
            #expect(
                try await Self.search(ws, main, query) == promoted[index],
                "answers to '\(query)' after promoting again"
            )
        }
        // Dropping the previous generation deletes its store and records.
        #expect(try await Self.generation(ws, "drop", main, ["--previous"]).exitCode == 0)
        #expect(!FileManager.default.fileExists(atPath: main.index.appendingPathComponent("data.mdb").path))
        let status = try await Self.generation(ws, "status", main)
        #expect(!status.stdout.contains("previous:"), "\(status)")
    }

    @Test(
        "run --dry-run with a candidate: chunks the active generation's part of the run embeds cost the candidate nothing"
    )
    func dryRunCountsTheSharedCacheOnce() async throws {
        let ws = try Workspace("generation-dry-run-cost")
        defer { ws.cleanUp() }
        try Corpus.write(count: 4, into: ws.corpus, seed: 0x6E_004B)
        let main = ws.target("main")
        try await ws.run(main, expecting: 0)
        #expect(try await Self.generation(ws, "start", main, Self.candidateSettings).exitCode == 0)
        try await ws.run(main, expecting: 0)
        // One chunk each, the same text in either chunking, embedded by the same embedder: the active
        // generation's part embeds them, the candidate's finds them in the state's embedding cache.
        for index in 1...3 {
            try Corpus.write(
                "A short note number \(index).\n",
                to: ws.corpus.appendingPathComponent("note\(index).txt")
            )
        }
        let dry = try await ws.run(main, ["--dry-run"], expecting: 0)
        let sections = dry.stdout.components(separatedBy: "generation ")
        let candidate = try #require(sections.first { $0.hasPrefix("g1:") }, "\(dry)")
        let active = try #require(sections.first { $0.hasPrefix("g0:") }, "\(dry)")
        #expect(!active.contains("to embed: 0 tokens"), "\(dry)")
        // Seen failing: the candidate's section counted the three notes' tokens again.
        #expect(
            candidate.contains("to embed: 0 tokens in 0 chunks of 3 documents (3 chunks from the embedding cache)"),
            "\(dry)"
        )
        let real = try await ws.run(main, expecting: 0)
        #expect((real.stdout + real.stderr).contains("(0 embedded, 3 from cache)"), "\(real)")
    }
}
