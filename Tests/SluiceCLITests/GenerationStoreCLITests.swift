import Foundation
import SluiceCore
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Index generations on the stores with a name per generation (docs/GENERATIONS.md, "How it is stored"): a
/// file (JSONL), table (pgvector, real PostgreSQL), collection (the Qdrant stand-in, which enforces the alias
/// API; a real Chroma) or namespace (the Pinecone stand-in, which enforces Pinecone's namespace behaviour)
/// per generation, and the stable name outside readers query — JSONL's link, pgvector's view, Qdrant's
/// alias — switched with every promote and rollback (Chroma's and Pinecone's outside reader follows the
/// manifest). The outside reader here is `sluice export` pointed at that name with a state of its own, so
/// what it sees is compared byte for byte with references built from scratch.
@Suite(.serialized)
struct GenerationStoreCLITests {
    static let candidateSettings = GenerationCLITests.candidateSettings

    /// A target reading the stable name of `main`'s generations, as psql, LangChain, a Qdrant client or a
    /// reader of files would: the view `t_<name>_active`, the alias `<name>_active` or the symbolic link
    /// `<name>_active` (JSONL). Chroma and Pinecone have no such name: their outside reader follows the
    /// manifest, as docs/GENERATIONS.md tells it to — the collection or namespace `generation status --json`
    /// names for the active generation, looked up each time it reads.
    static func outsideReader(
        _ ws: Workspace,
        _ store: StoreUnderTest,
        _ main: Workspace.Target,
        of name: String
    ) async throws -> Workspace.Target {
        switch store.kind {
        case .chroma, .pinecone:
            let status = try await GenerationCLITests.generation(ws, "status", main, ["--json"])
            let object = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
            let active = try #require(object?["active"] as? [String: Any], "\(status)")
            let location = try #require(active["store"] as? String)
            let named = String(location.split(separator: " ").last ?? "")
            let target = store.target(ws, "outside-\(name)", sinkName: name)
            if store.kind == .chroma {
                return Workspace.Target(
                    state: target.state,
                    index: target.index,
                    sink: target.sink + ["--set", "sink.collection=\(named)"]
                )
            }
            return Workspace.Target(
                state: target.state,
                index: target.index,
                sink: target.sink + ["--set", "sink.namespace=\(named == "(default)" ? "" : named)"]
            )
        default:
            return store.target(ws, "outside-\(name)", sinkName: "\(name)_active")
        }
    }

    /// Expects the export of `main`'s outside reader (``outsideReader(_:_:_:of:)``) to hold `expected`'s records.
    static func expectOutside(
        _ ws: Workspace,
        _ store: StoreUnderTest,
        _ main: Workspace.Target,
        _ expected: Data,
        _ what: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let outside = try await outsideReader(ws, store, main, of: "gen")
        try await expectExport(ws, store, outside, expected, what, sourceLocation: sourceLocation)
    }

    /// Expects `target`'s export to hold `expected`'s records (exactly, but for Chroma's normalized vectors).
    static func expectExport(
        _ ws: Workspace,
        _ store: StoreUnderTest,
        _ target: Workspace.Target?,
        _ expected: Data,
        _ what: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        guard let target else { return }
        let actual = try await ws.export(target, sourceLocation: sourceLocation)
        try expectSameRecords(actual, expected, exact: store.kind.exactVectors, what, sourceLocation: sourceLocation)
    }

    /// The export of a target of its own built from scratch on the corpus as it is now, with `settings`.
    static func reference(
        _ ws: Workspace,
        _ store: StoreUnderTest,
        _ name: String,
        _ settings: [String] = []
    ) async throws -> (Data, Workspace.Target) {
        let target = store.target(ws, name)
        try await ws.run(target, settings, expecting: 0)
        return (try await ws.export(target), target)
    }

    @Test(
        "a candidate built beside the active generation, kept current, promoted, rolled back and dropped; outside readers switch with it",
        arguments: [StoreUnderTest.Kind.jsonl, .pgvector, .qdrant, .chroma, .pinecone]
    )
    func buildPromoteRollbackDrop(_ kind: StoreUnderTest.Kind) async throws {
        let ws = try Workspace("generation-store-\(kind.rawValue)")
        defer { ws.cleanUp() }
        let store = try await StoreUnderTest.start(kind, in: ws)
        defer { store.stop() }
        try Corpus.write(count: 8, into: ws.corpus, seed: 0x6E_0040)
        let main = store.target(ws, "gen")
        try await ws.run(main, expecting: 0)
        let original = try await ws.export(main)

        let started = try await GenerationCLITests.generation(ws, "start", main, Self.candidateSettings)
        #expect(started.exitCode == 0, "\(started)")
        try await Self.expectOutside(ws, store, main, original, "the stable name from the start: generation g0")
        try await ws.run(main, expecting: 0)  // builds the candidate

        // A change while the candidate exists reaches both generations.
        try Corpus.write(
            "A note added while the candidate was built.\n",
            to: ws.corpus.appendingPathComponent("added.txt")
        )
        try await ws.run(main, expecting: 0)
        let (oldChunking, _) = try await Self.reference(ws, store, "refold")
        try await Self.expectExport(ws, store, main, oldChunking, "the active generation before the promote")
        try await Self.expectOutside(ws, store, main, oldChunking, "the stable name before the promote")
        // Where the candidate is (the text shows a JSONL generation's size in its place).
        let status = try await GenerationCLITests.generation(ws, "status", main, ["--json"])
        let candidateStore = [
            "pgvector": "table t_gen_g1", "qdrant": "collection gen_g1", "chroma": "collection c_gen_g1",
            "jsonl": "file \(store.directory.appendingPathComponent("gen_g1").path)",
            "pinecone": "index gen namespace tests_g1",
        ][
            kind.rawValue
        ]!
        #expect(status.stdout.contains("\"store\":\"\(candidateStore)\""), "\(status)")

        let queries = ["configuration file", "error message"]
        var before: [String] = []
        for query in queries { before.append(try await GenerationCLITests.search(ws, main, query)) }
        let promoted = try await GenerationCLITests.generation(ws, "promote", main)
        #expect(promoted.exitCode == 0, "\(promoted)")
        let (newChunking, newTarget) = try await Self.reference(ws, store, "refnew", Self.candidateSettings)
        #expect(oldChunking.count != newChunking.count, "the two chunkings gave alike exports: the test proves nothing")
        try await Self.expectExport(ws, store, main, newChunking, "the promoted candidate")
        try await Self.expectOutside(ws, store, main, newChunking, "the stable name after the promote")
        // Searches answer from the new generation. Equal to the reference's answers where the store searches
        // exactly (the Qdrant stand-in, Chroma at this size); pgvector's HNSW index is approximate, and one
        // built row by row (the candidate, over two runs) may order near ties unlike one built in bulk.
        for (index, query) in queries.enumerated() {
            let answers = try await GenerationCLITests.search(ws, main, query)
            #expect(answers != before[index], "search '\(query)' still answers from the old generation")
            if kind != .pgvector {
                #expect(
                    try await answers == GenerationCLITests.search(ws, newTarget, query),
                    "search '\(query)' after the promote"
                )
            }
        }

        let rolledBack = try await GenerationCLITests.generation(ws, "rollback", main)
        #expect(rolledBack.exitCode == 0, "\(rolledBack)")
        for (index, query) in queries.enumerated() {
            #expect(try await GenerationCLITests.search(ws, main, query) == before[index], "'\(query)' after rollback")
        }
        try await Self.expectExport(ws, store, main, oldChunking, "after the rollback")
        try await Self.expectOutside(ws, store, main, oldChunking, "the stable name after the rollback")

        #expect(try await GenerationCLITests.generation(ws, "promote", main).exitCode == 0)
        try await Self.expectOutside(ws, store, main, newChunking, "the stable name after promoting again")
        let dropped = try await GenerationCLITests.generation(ws, "drop", main, ["--previous"])
        #expect(dropped.exitCode == 0, "\(dropped)")
        // The original generation's table or collection is gone; the active one is served as before. (A state
        // beside JSONL files with no manifest follows the store's copy of it, so its files are looked at.)
        if kind == .jsonl {
            let files = store.directory.appendingPathComponent("gen")
            #expect(!FileManager.default.fileExists(atPath: files.path), "\(files.path) after the drop")
            #expect(FileManager.default.fileExists(atPath: store.directory.appendingPathComponent("gen_g1").path))
        }
        // The probe is a state with a checkpoint of its own (a load into a local store) and no generations: it
        // reads the pipeline file's original name, as a loading state that never used generations does. (A
        // state with no checkpoint is a reader's, which follows the store's generations: it would read g1.)
        let probe = ws.target("probe")
        try await ws.run(probe, expecting: 0)
        let original0 = Workspace.Target(state: probe.state, index: probe.index, sink: store.sinkArguments("gen"))
        let info = try await ws.sluice(["sink", "info", ws.pipeline.path] + original0.arguments)
        // A Pinecone namespace is gone with its records (the index, which holds the others, stays).
        let gone = kind == .pinecone ? "count: 0" : kind == .jsonl ? "gen_g1" : "exists: no"
        #expect(info.exitCode == 0 && info.stdout.contains(gone), "\(info)")
        try await Self.expectExport(ws, store, main, newChunking, "after dropping the previous generation")
        try await Self.expectOutside(ws, store, main, newChunking, "the stable name after the drop")
    }

    @Test(
        "kill -9 during a promote (pgvector, JSONL): each reader sees the old generation or the new one, never a mix; the next command brings the view or link in line",
        arguments: [StoreUnderTest.Kind.pgvector, .jsonl],
        ["generations.promote-checked", "generations.manifest-renamed"]
    )
    func killDuringPromote(_ kind: StoreUnderTest.Kind, _ point: String) async throws {
        let ws = try Workspace("generation-store-kill-\(kind.rawValue)")
        defer { ws.cleanUp() }
        let store = try await StoreUnderTest.start(kind, in: ws)
        defer { store.stop() }
        try Corpus.write(count: 6, into: ws.corpus, seed: 0x6E_0041)
        let main = store.target(ws, "gen")
        let outside = try await Self.outsideReader(ws, store, main, of: "gen")
        try await ws.run(main, expecting: 0)
        let old = try await ws.export(main)
        #expect(try await GenerationCLITests.generation(ws, "start", main, Self.candidateSettings).exitCode == 0)
        try await ws.run(main, expecting: 0)
        let (new, _) = try await Self.reference(ws, store, "refnew", Self.candidateSettings)
        #expect(old != new, "the two chunkings gave the same export: the test proves nothing")

        let crashed = try await GenerationCLITests.generation(
            ws,
            "promote",
            main,
            environment: ["SLUICE_DEBUG_CRASH_AT": point]
        )
        CrashWindowCLITests.expectKilled(crashed)
        if point == "generations.manifest-renamed" {
            // The manifest switched Sluice's readers; the view (link) was not replaced yet: it shows the old
            // generation whole.
            expectSameExport(try await ws.export(main), new, "Sluice's readers after the rename")
            expectSameExport(try await ws.export(outside), old, "the view, killed before its switch")
            try await ws.run(main, expecting: 0)  // the next run brings the view in line
        } else {
            expectSameExport(try await ws.export(main), old, "killed before the rename: the old generation")
            expectSameExport(try await ws.export(outside), old, "the view, killed before the rename")
            #expect(try await GenerationCLITests.generation(ws, "promote", main).exitCode == 0)
        }
        expectSameExport(try await ws.export(main), new, "after the promote")
        expectSameExport(try await ws.export(outside), new, "the view after the promote")
    }

    @Test("a store without generations refuses `generation start` with exit 1 and says which stores have them")
    func storeWithoutGenerationsRefused() async throws {
        let ws = try Workspace("generation-store-refused")
        defer { ws.cleanUp() }
        try Corpus.write(count: 2, into: ws.corpus, seed: 0x6E_0042)
        let target = ws.target("openai")
        // Refused before the store is reached: no server is needed.
        let store = Workspace.Target(
            state: target.state,
            index: target.index,
            sink: [
                "sink.kind=openai-vector-store", "sink.url=http://127.0.0.1:9/v1", "sink.collection=c",
                "sink.api_key_env=\(StoreUnderTest.apiKeyVariable)",
            ].flatMap { ["--set", $0] }
        )
        setenv(StoreUnderTest.apiKeyVariable, StoreUnderTest.apiKey, 1)
        let refused = try await GenerationCLITests.generation(ws, "start", store, Self.candidateSettings)
        #expect(refused.exitCode == 1, "\(refused)")
        #expect(refused.stderr.contains("sink.kind openai-vector-store has none yet"), "\(refused)")
        #expect(!FileManager.default.fileExists(atPath: store.state.appendingPathComponent("generations.json").path))
    }
}
