import Foundation
import SluiceCore
import SluiceHTTP
import SluiceTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A new or lost state adopts the vectors the store already holds (issue 33, goal 4; docs/OPERATIONS.md,
/// "A lost state, re-sharding"): no embedding request for unchanged text, and the store ends as an
/// uninterrupted run leaves it. Embedding requests are counted at the OpenAI-compatible stand-in.
@Suite(.serialized)
struct AdoptFromStoreCLITests {
    /// The stores that read vectors back, as the tests reach them: the local store of the workspace, or a
    /// ``StoreUnderTest`` (JSONL files, a real PostgreSQL with pgvector, a real Chroma, the validating Qdrant
    /// and Pinecone stand-ins).
    enum Store: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case local, jsonl, pgvector, chroma, qdrant, pinecone
        var testDescription: String { rawValue }
        /// Whether the store gives back its vectors bit for bit: Chroma normalizes each vector it is given for
        /// cosine, so a vector written again may differ in its last bits (within 1e-6).
        var exactVectors: Bool { self != .chroma }
    }

    static let keyVariable = "SLUICE_TEST_ADOPT_KEY"
    let key = "sk-adopt-\(UUID().uuidString.lowercased())"

    /// The OpenAI-compatible stand-in that counts the embedding requests, for this suite's key and 32
    /// dimensions (``embedderSettings(_:)`` points a run at it).
    func embedder() async throws -> StandInServer {
        try await StandInServer.launch(script: "openai_standin.py", arguments: ["--api-key", key, "--dims", "32"])
    }

    func embedderSettings(_ server: StandInServer) -> [String] {
        [
            "--set", "embed.provider=openai", "--set", "embed.base_url=\(server.baseURL)/v1",
            "--set", "embed.model=text-embedding-3-small", "--set", "embed.dimensions=32",
            "--set", "embed.api_key_env=\(Self.keyVariable)", "--set", "embed.batch=16",
            "--set", "embed.timeout_seconds=5", "--set", "embed.max_retries=5",
        ]
    }

    /// A target named `name` on `store`'s sink `sink` (targets naming the same sink share it).
    func target(_ ws: Workspace, _ store: StoreUnderTest?, _ name: String, sink: String) -> Workspace.Target {
        if let store { return store.target(ws, name, sinkName: sink) }
        let own = ws.target(name)
        return Workspace.Target(state: own.state, index: ws.root.appendingPathComponent("local-\(sink)"))
    }

    /// `sluice run` with the remote embedder; returns the embedding requests the stand-in received for it.
    @discardableResult
    func load(
        _ ws: Workspace,
        _ target: Workspace.Target,
        _ server: StandInServer,
        _ extra: [String] = [],
        stats: URL? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Int {
        let before = try await Self.requests(server)
        let result = try await ws.sluice(
            ws.runArguments(
                target,
                embedderSettings(server) + extra + (stats.map { ["--stats-json", $0.path] } ?? [])
            ),
            environment: [Self.keyVariable: key],
            timeout: .seconds(180)
        )
        #expect(result.exitCode == 0, "\(result)", sourceLocation: sourceLocation)
        return try await Self.requests(server) - before
    }

    static func requests(_ server: StandInServer) async throws -> Int {
        let response = try await HTTPClient.shared.send(HTTPRequest(url: server.baseURL + "/stats"))
        let stats = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Int])
        return stats["requests"] ?? 0
    }

    func start(_ store: Store, _ ws: Workspace) async throws -> StoreUnderTest? {
        switch store {
        case .local: nil
        case .jsonl: try await StoreUnderTest.start(.jsonl, in: ws)
        case .pgvector: try await StoreUnderTest.start(.pgvector, in: ws)
        case .chroma: try await StoreUnderTest.start(.chroma, in: ws)
        case .qdrant: try await StoreUnderTest.start(.qdrant, in: ws)
        case .pinecone: try await StoreUnderTest.start(.pinecone, in: ws)
        }
    }

    @Test(
        "a lost state adopts the store's vectors: no embedding request, the same store; a changed document is embedded again and its old chunks go",
        arguments: Store.allCases
    )
    func lostStateAdoptsTheStore(_ kind: Store) async throws {
        let ws = try Workspace("adopt-lost-\(kind.rawValue)")
        defer { ws.cleanUp() }
        let keys = try Corpus.write(count: 24, into: ws.corpus, seed: 0x5EED_0A01, maxBytes: 6_000)
        let store = try await start(kind, ws)
        defer { store?.stop() }
        let server = try await embedder()
        defer { server.stop() }

        let main = target(ws, store, "main", sink: "shared")
        let first = try await load(ws, main, server)
        #expect(first > 0)
        let loaded = try await ws.export(main)
        let chunks = try Export.records(loaded).count

        // The state is lost: the next run finds every vector in the store.
        try FileManager.default.removeItem(at: main.state)
        let statsURL = ws.file("adopted.stats.json")
        let again = try await load(ws, main, server, stats: statsURL)
        #expect(again == 0, "a rebuilt state sent \(again) embedding requests for unchanged text")
        try expectSameRecords(
            try await ws.export(main),
            loaded,
            exact: kind.exactVectors,
            "the store after a rebuilt state"
        )
        let stats = try ws.stats(statsURL)
        #expect(stats["vectors_adopted"] == chunks, "\(stats.values)")
        #expect(stats["chunks_embedded"] == 0)
        #expect(try await ws.status(main).documents == ["indexed": keys.count])

        // A rebuilt state that adopted everything runs again like any other: nothing to do.
        #expect(try await load(ws, main, server) == 0)

        // A document changed while the state was lost: its new chunks are embedded, its old ones deleted.
        let changed = ws.corpus.appendingPathComponent(keys[3])
        let text = try String(contentsOf: changed, encoding: .utf8)
        try ("A new opening paragraph, written while the state was lost.\n\n" + text)
            .write(to: changed, atomically: true, encoding: .utf8)
        try FileManager.default.removeItem(at: main.state)
        let afterChange = try await load(ws, main, server)
        #expect(afterChange > 0, "the changed document was not embedded again")

        // The reference: an uninterrupted run of the same corpus into a store of its own.
        let reference = target(ws, store, "reference", sink: "reference")
        try await load(ws, reference, server)
        try expectSameRecords(
            try await ws.export(main),
            try await ws.export(reference),
            exact: kind.exactVectors,
            "rebuilt state vs. a fresh load"
        )
    }

    @Test(
        "re-sharding 2 → 3 on the same store sends no embedding request and leaves the store as it was",
        arguments: Store.allCases
    )
    func reshardingAdoptsTheStore(_ kind: Store) async throws {
        let ws = try Workspace("adopt-reshard-\(kind.rawValue)")
        defer { ws.cleanUp() }
        let keys = try Corpus.write(count: 30, into: ws.corpus, seed: 0x5EED_0A02, maxBytes: 6_000)
        let store = try await start(kind, ws)
        defer { store?.stop() }
        let server = try await embedder()
        defer { server.stop() }

        for index in 0..<2 {
            let shard = target(ws, store, "two-\(index)", sink: "shared")
            #expect(try await load(ws, shard, server, ["--shard", "\(index)/2"]) > 0)
        }
        let loaded = try await ws.export(target(ws, store, "two-0", sink: "shared"))

        var adopted = 0
        for index in 0..<3 {
            let shard = target(ws, store, "three-\(index)", sink: "shared")
            let statsURL = ws.file("three-\(index).stats.json")
            let requests = try await load(ws, shard, server, ["--shard", "\(index)/3"], stats: statsURL)
            #expect(requests == 0, "shard \(index)/3 sent \(requests) embedding requests")
            adopted += try ws.stats(statsURL)["vectors_adopted"] ?? 0
            let mine = try keys.filter { try Shard(index: index, count: 3).owns($0) }
            #expect(try await ws.status(shard).documents == ["indexed": mine.count], "shard \(index)/3")
        }
        let after = try await ws.export(target(ws, store, "three-0", sink: "shared"))
        try expectSameRecords(after, loaded, exact: kind.exactVectors, "the store after re-sharding")
        #expect(adopted == (try Export.records(loaded).count), "each shard adopts its own documents' vectors")
    }
    @Test(
        "kill -9 in the middle of an adoption, twice: the resumed runs adopt the rest, send no embedding request and end as the store was",
        arguments: [Store.local, .pgvector, .qdrant, .pinecone]
    )
    func killedAdoptionResumes(_ kind: Store) async throws {
        let ws = try Workspace("adopt-killed-\(kind.rawValue)")
        defer { ws.cleanUp() }
        let keys = try Corpus.write(count: 20, into: ws.corpus, seed: 0x5EED_0A03, maxBytes: 6_000)
        let store = try await start(kind, ws)
        defer { store?.stop() }
        let server = try await embedder()
        defer { server.stop() }

        let main = target(ws, store, "main", sink: "shared")
        #expect(try await load(ws, main, server) > 0)
        let loaded = try await ws.export(main)
        try FileManager.default.removeItem(at: main.state)

        // Killed with some documents' vectors adopted into the cache but nothing written or committed, then
        // killed again after a few documents were committed: each resumed run must keep adopting.
        let before = try await Self.requests(server)
        for point in ["adopt.cached@6", "commit.committed@4"] {
            let crashed = try await ws.sluice(
                ws.runArguments(main, embedderSettings(server)),
                environment: [Self.keyVariable: key, "SLUICE_DEBUG_CRASH_AT": point],
                timeout: .seconds(180)
            )
            #expect(crashed.signaled && crashed.status == SIGKILL, "\(point) was not reached: \(crashed)")
        }
        let statsURL = ws.file("resumed.stats.json")
        let resumed = try await load(ws, main, server, stats: statsURL)
        #expect(resumed == 0)
        let sent = try await Self.requests(server) - before
        #expect(sent == 0, "the killed and resumed adoption sent \(sent) embedding requests for unchanged text")
        #expect(try ws.stats(statsURL)["chunks_embedded"] == 0)
        #expect(try await ws.status(main).documents == ["indexed": keys.count])
        try expectSameRecords(
            try await ws.export(main),
            loaded,
            exact: kind.exactVectors,
            "the store after a killed adoption"
        )
        // Every document committed: the next run neither adopts nor embeds.
        let quietURL = ws.file("quiet.stats.json")
        #expect(try await load(ws, main, server, stats: quietURL) == 0)
        #expect((try ws.stats(quietURL)["vectors_adopted"] ?? 0) == 0)
    }
}
