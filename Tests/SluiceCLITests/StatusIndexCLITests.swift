import Foundation
import SluiceClient
import Testing

/// `sluice status` (text and `--json`) and `serve`'s `/ready` say which index the local store has and, for
/// `hnsw`, where the graph's nodes live and whether searches use the graph or still scan (below
/// `sink.hnsw.exact_below`, or no usable graph saved yet: docs/LOCAL_INDEX.md, "The graph's life cycle").
@Suite struct StatusIndexCLITests {
    static func storeIndex(
        _ ws: Workspace,
        _ target: Workspace.Target,
        _ settings: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> (json: [String: String], line: String?) {
        try await statusEntry(ws, target, settings, key: "store_index", line: "store: ", sourceLocation: sourceLocation)
    }

    /// `sluice status --json`'s object `key` and the text output's line that starts with `line`.
    static func statusEntry(
        _ ws: Workspace,
        _ target: Workspace.Target,
        _ settings: [String],
        key: String,
        line prefix: String,
        environment: [String: String?] = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> (json: [String: String], line: String?) {
        let arguments = ["status", ws.pipeline.path] + target.arguments + settings
        let result = try await ws.sluice(arguments + ["--json"], environment: environment)
        try #require(result.exitCode == 0, "\(result)", sourceLocation: sourceLocation)
        let status = try MachineReadableCLITests.json(result.stdout, sourceLocation: sourceLocation)
        let entry = try #require(status[key] as? [String: String], "\(result.stdout)", sourceLocation: sourceLocation)
        let text = try await ws.sluice(arguments, environment: environment)
        try #require(text.exitCode == 0, "\(text)", sourceLocation: sourceLocation)
        return (entry, text.stdout.split(separator: "\n").first { $0.hasPrefix(prefix) }.map(String.init))
    }

    @Test("a small store: hnsw with its nodes in memory, no graph below exact_below, searches scan")
    func belowExactBelow() async throws {
        let ws = try Workspace("status-index-small")
        defer { ws.cleanUp() }
        _ = try Corpus.write(count: 4, into: ws.corpus, seed: 0x5EED_3301)
        let main = ws.target("main")
        try await ws.run(main, expecting: 0)
        let (index, line) = try await Self.storeIndex(ws, main, [])
        #expect(
            index == [
                "index": "hnsw", "hnsw_nodes": "memory", "hnsw_graph": "below_exact_below",
                "hnsw_exact_below": "10000",
            ]
        )
        #expect(
            line
                == "store: index hnsw (nodes in memory): no graph below 10000 vectors (sink.hnsw.exact_below); "
                + "searches scan",
            "\(line ?? "no store line")"
        )
    }

    @Test(
        "a graph built and saved: its kind of nodes, its generation, searches use it; the other kind's settings find none, a build pending",
        arguments: ["memory", "file"]
    )
    func builtThenPending(nodes: String) async throws {
        let ws = try Workspace("status-index-\(nodes)")
        defer { ws.cleanUp() }
        _ = try Corpus.write(count: 6, into: ws.corpus, seed: 0x5EED_3302)
        let main = ws.target("main")
        // exact_below 0: the graph follows the store from empty, and the run's end saves it.
        let settings = ["--set", "sink.hnsw.exact_below=0", "--set", "sink.hnsw.nodes=\(nodes)"]
        try await ws.run(main, settings, expecting: 0)
        let built = try await Self.storeIndex(ws, main, settings)
        #expect(built.json["index"] == "hnsw")
        #expect(built.json["hnsw_nodes"] == nodes)
        #expect(built.json["hnsw_graph"] == "built", "\(built.json)")
        #expect(built.json["hnsw_exact_below"] == "0")
        let generation = try #require(built.json["hnsw_graph_generation"], "\(built.json)")
        #expect(built.json["hnsw_graph_behind"] == "0")
        // auto's breadth: 64 for both kinds, the file graph's codes not trained in a store this small.
        #expect(built.json["hnsw_ef_search"] == "64", "\(built.json)")
        let kind = nodes == "file" ? "a file" : "memory"
        #expect(
            built.line
                == "store: index hnsw (nodes in \(kind)): graph built at generation \(generation); searches use it "
                + "at ef 64",
            "\(built.line ?? "no store line")"
        )

        // The other kind loads only its own saved graph: none, so searches scan until a writer builds one.
        let other = nodes == "file" ? "memory" : "file"
        let switched = ["--set", "sink.hnsw.exact_below=0", "--set", "sink.hnsw.nodes=\(other)"]
        let pending = try await Self.storeIndex(ws, main, switched)
        #expect(pending.json["hnsw_nodes"] == other)
        #expect(pending.json["hnsw_graph"] == "pending", "\(pending.json)")
        #expect(pending.json["hnsw_graph_generation"] == nil)
        #expect(pending.json["hnsw_ef_search"] == nil)
        #expect(
            pending.line?.hasSuffix(
                "no graph yet (0 vectors or more, sink.hnsw.exact_below); searches scan until the next run builds it"
            ) == true,
            "\(pending.line ?? "no store line")"
        )

        // `serve`'s /ready reports the same entries from its own store.
        let server = try await ServeProcess.start(ws, main, settings)
        let ready = try await server.client().ready()
        _ = try await server.stop()
        #expect(ready.storeIndex?["index"] == "hnsw")
        #expect(ready.storeIndex?["hnsw_nodes"] == nodes)
        #expect(ready.storeIndex?["hnsw_graph"] == "built", "\(String(describing: ready.storeIndex))")
        #expect(ready.storeIndex?["hnsw_graph_generation"] == generation)
        #expect(ready.storeIndex?["hnsw_ef_search"] == "64")
    }

    /// `store_map`: whether this process's point reads in the store's map fault one page at a time (fault-around
    /// off, docs/LOCAL_INDEX.md) or keep the kernel's fault-around, and why; `SLUICE_LMDB_FAULT_AROUND=kernel`
    /// keeps it, in `status` and in `serve`'s `/ready`.
    @Test("status and /ready say whether the store's map faults one page a read, and why not")
    func storeMap() async throws {
        let ws = try Workspace("status-store-map")
        defer { ws.cleanUp() }
        _ = try Corpus.write(count: 3, into: ws.corpus, seed: 0x5EED_3304)
        let main = ws.target("main")
        try await ws.run(main, expecting: 0)
        func status(_ environment: [String: String?]) async throws -> (json: [String: String], line: String?) {
            try await Self.statusEntry(ws, main, [], key: "store_map", line: "store map: ", environment: environment)
        }
        let kernel = "SLUICE_LMDB_FAULT_AROUND=kernel is set"

        let kept = try await status(["SLUICE_LMDB_FAULT_AROUND": "kernel"])
        #expect(kept.json == ["fault_around": "on", "reason": kernel])
        #expect(kept.line == "store map: the kernel's fault-around (\(kernel))", "\(kept.line ?? "no line")")

        // Without the variable: off where this kernel lets a process register its map (Linux 6.7 and later, no
        // seccomp profile refusing userfaultfd), else on with a reason that is not the variable.
        let plain = try await status(["SLUICE_LMDB_FAULT_AROUND": nil])
        if plain.json["fault_around"] == "off" {
            #expect(plain.json == ["fault_around": "off"])
            #expect(
                plain.line == "store map: point reads fault one page at a time (fault-around off; scans keep it)",
                "\(plain.line ?? "no line")"
            )
        } else {
            #expect(plain.json["fault_around"] == "on")
            let reason = try #require(plain.json["reason"], "\(plain.json)")
            #expect(!reason.isEmpty && reason != kernel)
        }

        // `serve` reports its own process's map, and the variable keeps fault-around there too.
        for (environment, expected) in [
            (["SLUICE_LMDB_FAULT_AROUND": "kernel"], kept.json), (["SLUICE_LMDB_FAULT_AROUND": nil], plain.json),
        ] as [([String: String?], [String: String])] {
            let server = try await ServeProcess.start(ws, main, environment: environment)
            let ready = try await server.client().ready()
            _ = try await server.stop()
            #expect(ready.storeMap == expected, "\(String(describing: ready.storeMap))")
        }
    }

    @Test("exact: the index alone, and nothing of a graph")
    func exactIndex() async throws {
        let ws = try Workspace("status-index-exact")
        defer { ws.cleanUp() }
        _ = try Corpus.write(count: 3, into: ws.corpus, seed: 0x5EED_3303)
        let main = ws.target("main")
        let settings = ["--set", "sink.local_index=exact"]
        try await ws.run(main, settings, expecting: 0)
        let (index, line) = try await Self.storeIndex(ws, main, settings)
        #expect(index == ["index": "exact"])
        #expect(line == "store: index exact", "\(line ?? "no store line")")
    }
}
