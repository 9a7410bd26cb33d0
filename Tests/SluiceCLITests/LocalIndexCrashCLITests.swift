import Foundation
import SluiceCore
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// kill -9 inside the local store's HNSW upkeep (`SLUICE_DEBUG_CRASH_AT`, see `CrashPoint`): between a
/// write's commit and the graph following it, while the graph is saved, and after a rebuild. The LMDB data
/// is the truth: whatever the kill left, `sluice search` must answer as the exact scan does, at once and
/// after the next run.
@Suite("kill -9 inside the local store's index upkeep")
struct LocalIndexCrashCLITests {
    static let queries = ["alpha delta index", "quarterly report figures", "the store answers searches"]
    /// These stores are small: a graph is built for them only below `exact_below` 0 (no graph below it).
    static let graph = ["--set", "sink.hnsw.exact_below=0"]
    /// Both kinds of graph (`sink.hnsw.nodes`): hnswlib's in memory, ours with its nodes in a file.
    static let nodeKinds = ["memory", "file"]

    static func nodes(_ kind: String) -> [String] { ["--set", "sink.hnsw.nodes=\(kind)"] }

    /// The scores (to 4 decimals) of the hits, by the index `index` sets (the HNSW graph unless told) and by
    /// the exact scan.
    static func expectSearchIsExact(
        _ ws: Workspace,
        _ target: Workspace.Target,
        _ moment: String,
        index: [String] = ["--set", "sink.local_index=hnsw"],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        for query in queries {
            var answers: [[String]] = []
            for settings in [index, ["--set", "sink.local_index=exact"]] {
                // A candidate list longer than the store makes the graph's search visit every node it
                // holds: the answer is the scan's exactly when the graph matches the data. Vector mode:
                // hybrid's fused ranks would also depend on how ties among identical texts fall.
                let result = try await ws.sluice(
                    ["search", query, "--json", "-k", "8", "--mode", "vector", ws.pipeline.path] + target.arguments + [
                        "--set", "sink.hnsw.ef_search=5000", "--set", "sink.hnsw.exact_below=0",
                    ] + settings
                )
                #expect(result.exitCode == 0, "\(moment): \(result)", sourceLocation: sourceLocation)
                answers.append(
                    result.stdout.split(separator: "\n").compactMap { line in
                        guard let hit = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                            let id = hit["id"] as? String, let score = hit["score"] as? Double
                        else { return nil }
                        // Scores only: chunks of identical text have identical vectors, and the graph and
                        // the scan break such ties differently.
                        _ = id
                        return String(format: "%.4f", score)
                    }.sorted()
                )
            }
            #expect(answers[0].count == 8, "\(moment): \(answers[0])", sourceLocation: sourceLocation)
            #expect(
                answers[0] == answers[1],
                "\(moment): '\(query)' by the index (\(index)) vs. the scan",
                sourceLocation: sourceLocation
            )
        }
    }

    static func indexFiles(_ target: Workspace.Target) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: target.index.path)
            .filter { $0.hasPrefix("hnsw-") || $0.hasPrefix("graph-") }
    }

    @Test(
        "kill -9 in the index upkeep: searches stay exact, and the next run leaves one saved graph that matches",
        arguments: [
            "local.upsert-committed", "local.index-written", "local.index-renamed", "local.change-log-trimmed",
            "local.index-built",
        ],
        nodeKinds
    )
    func killInIndexUpkeep(point: String, kind: String) async throws {
        let graph = Self.graph + Self.nodes(kind)
        let index = ["--set", "sink.local_index=hnsw"] + Self.nodes(kind)
        let ws = try Workspace("crash-local-index")
        defer { ws.cleanUp() }
        let keys = try Corpus.write(count: 24, into: ws.corpus, seed: 0x1DE7)
        let main = ws.target("main")
        try await ws.run(main, graph, expecting: 0)
        #expect(try Self.indexFiles(main).count == 1, "the first run saves the graph")

        // Changed, new and removed documents: the next run upserts and deletes.
        _ = try Corpus.write(count: 8, into: ws.corpus, seed: 0x2DE7, prefix: "new")
        _ = try Corpus.write(count: 6, into: ws.corpus, seed: 0x3DE7)  // overwrites doc-0…5
        try FileManager.default.removeItem(at: ws.corpus.appendingPathComponent(keys[keys.count - 1]))
        if point == "local.index-built" {
            // A lost graph is built again by the next run, from a snapshot beside its writes; the kill comes
            // once it is built, before it catches up with them.
            for file in try Self.indexFiles(main) {
                try FileManager.default.removeItem(at: main.index.appendingPathComponent(file))
            }
        }
        let crashed = try await ws.sluice(
            ws.runArguments(main, graph + ["--prune"]),
            environment: ["SLUICE_DEBUG_CRASH_AT": point]
        )
        CrashWindowCLITests.expectKilled(crashed)
        try await Self.expectSearchIsExact(ws, main, "after the kill at \(point)", index: index)

        try await ws.run(main, graph + ["--prune"], expecting: 0)
        try await Self.expectSearchIsExact(ws, main, "after the next run", index: index)
        let files = try Self.indexFiles(main)
        #expect(files.count == 1, "\(files)")
    }

    @Test(
        "kill -9 after some of a run's writes: searches answer from the saved graph and the change log as the scan does, and the next run brings the graph up to date",
        arguments: nodeKinds
    )
    func killAfterSomeWritesUsesTheChangeLog(kind: String) async throws {
        let graph = Self.graph + Self.nodes(kind)
        let index = ["--set", "sink.local_index=hnsw"] + Self.nodes(kind)
        let ws = try Workspace("crash-local-change-log")
        defer { ws.cleanUp() }
        _ = try Corpus.write(count: 24, into: ws.corpus, seed: 0xC1A6)
        let main = ws.target("main")
        try await ws.run(main, graph, expecting: 0)
        let saved = try Self.indexFiles(main)
        _ = try Corpus.write(count: 12, into: ws.corpus, seed: 0xC2A6, prefix: "new")
        _ = try Corpus.write(count: 6, into: ws.corpus, seed: 0xC3A6)  // overwrites doc-0…5: stale chunks deleted
        let crashed = try await ws.sluice(
            ws.runArguments(main, graph + ["--set", "sink.batch=4"]),
            environment: ["SLUICE_DEBUG_CRASH_AT": "local.upsert-committed@5"]
        )
        CrashWindowCLITests.expectKilled(crashed)
        #expect(try Self.indexFiles(main) == saved, "killed before its save: the saved graph is older than the data")
        try await Self.expectSearchIsExact(ws, main, "after the kill", index: index)
        try await ws.run(main, graph, expecting: 0)
        try await Self.expectSearchIsExact(ws, main, "after the next run", index: index)
        #expect(try Self.indexFiles(main).count == 1)
    }

    @Test(
        "kill -9 in the first build beside a run's writes, and in the relabelling of a store written with exact: searches stay exact, and the next run saves one graph",
        arguments: [
            (["--set", "sink.hnsw.exact_below=8", "--set", "sink.batch=4"], "local.index-built", false),
            (Self.graph, "local.index-relabelled", true),
            (Self.graph, "local.index-built", true),
        ],
        nodeKinds
    )
    func killInTheFirstBuild(
        run: (settings: [String], point: String, exactFirst: Bool),
        kind: String
    ) async throws {
        let (settings, point, exactFirst) = (run.settings + Self.nodes(kind), run.point, run.exactFirst)
        let index = ["--set", "sink.local_index=hnsw"] + Self.nodes(kind)
        let ws = try Workspace("crash-local-first-build")
        defer { ws.cleanUp() }
        _ = try Corpus.write(count: 24, into: ws.corpus, seed: 0xB1D7)
        let main = ws.target("main")
        if exactFirst {
            // Written without labels: the run with the graph relabels every record, then builds.
            try await ws.run(main, ["--set", "sink.local_index=exact"], expecting: 0)
            _ = try Corpus.write(count: 6, into: ws.corpus, seed: 0xB2D7, prefix: "new")
        }
        // Without exactFirst, a write of this run finds the store at exact_below (8) and starts the build;
        // the run ends past twice that, so its finish waits for the build (and the kill comes in it).
        let crashed = try await ws.sluice(
            ws.runArguments(main, settings),
            environment: ["SLUICE_DEBUG_CRASH_AT": point]
        )
        CrashWindowCLITests.expectKilled(crashed)
        #expect(try Self.indexFiles(main).isEmpty, "killed before anything of the graph was saved")
        try await Self.expectSearchIsExact(ws, main, "after the kill at \(point)", index: index)

        try await ws.run(main, settings, expecting: 0)
        try await Self.expectSearchIsExact(ws, main, "after the next run", index: index)
        #expect(try Self.indexFiles(main).count == 1)
    }
}
