import Foundation
import SluiceCore
import SluiceHTTP
import SluiceTesting
import Testing

/// Qdrant and Pinecone record only their vectors' dimension, so Sluice records the embedder that made them
/// (Qdrant's collection metadata, a Pinecone index tag per namespace; Chroma's collection metadata too) and a
/// new state adopts from them only when that record is the pipeline's embedder (docs/OPERATIONS.md, "A lost
/// state, re-sharding").
@Suite(.serialized)
struct AdoptRecordedEmbedderCLITests {
    let adopt = AdoptFromStoreCLITests()

    @Test(
        "another model of the same dimension over a lost state: exit 1, no embedding request, the store untouched",
        arguments: [StoreUnderTest.Kind.qdrant, .pinecone]
    )
    func anotherEmbedderIsRefused(_ kind: StoreUnderTest.Kind) async throws {
        let ws = try Workspace("adopt-other-\(kind.rawValue)")
        defer { ws.cleanUp() }
        try Corpus.write(count: 8, into: ws.corpus, seed: 0x5EED_0A04, maxBytes: 4_000)
        let store = try await StoreUnderTest.start(kind, in: ws)
        defer { store.stop() }
        let server = try await adopt.embedder()
        defer { server.stop() }

        let main = store.target(ws, "main", sinkName: "shared")
        #expect(try await adopt.load(ws, main, server) > 0)
        let loaded = try await ws.export(main)
        try FileManager.default.removeItem(at: main.state)

        let before = try await AdoptFromStoreCLITests.requests(server)
        let result = try await ws.sluice(
            ws.runArguments(
                main,
                adopt.embedderSettings(server) + ["--set", "embed.model=text-embedding-3-large"]
            ),
            environment: [AdoptFromStoreCLITests.keyVariable: adopt.key],
            timeout: .seconds(120)
        )
        #expect(result.exitCode == 1, "\(result)")
        #expect(result.stderr.contains("holds vectors of openai/text-embedding-3-small@32"), "\(result.stderr)")
        #expect(try await AdoptFromStoreCLITests.requests(server) == before)
        expectSameExport(try await ws.export(main), loaded, "the store after a refused run")
    }

    @Test(
        "a collection without a record (another tool's copy): not adopted from, said once, loaded as a fresh run",
        arguments: [StoreUnderTest.Kind.qdrant, .chroma]
    )
    func collectionWithoutRecordIsNotAdoptedFrom(_ kind: StoreUnderTest.Kind) async throws {
        let ws = try Workspace("adopt-unrecorded-\(kind.rawValue)")
        defer { ws.cleanUp() }
        let keys = try Corpus.write(count: 10, into: ws.corpus, seed: 0x5EED_0A05, maxBytes: 4_000)
        let store = try await StoreUnderTest.start(kind, in: ws)
        defer { store.stop() }
        let server = try await adopt.embedder()
        defer { server.stop() }

        let reference = store.target(ws, "reference", sinkName: "reference")
        let inputsBefore = try await Self.inputs(server)
        #expect(try await adopt.load(ws, reference, server) > 0)
        // Texts, not requests: how a run's chunks fall into requests depends on timing.
        let first = try await Self.inputs(server) - inputsBefore
        // Another tool copies every record into a collection it creates itself, with no metadata.
        if kind == .qdrant {
            try await Self.copyQdrantCollection(store)
        } else {
            try await Self.copyChromaCollection(store)
        }
        try await expectLoadedAsFresh(ws, store, server, copy: "copy", reference: reference, embedded: first, keys)
    }

    /// The texts the stand-in has embedded (`inputs_ok` of its `/stats`).
    static func inputs(_ server: StandInServer) async throws -> Int {
        let response = try await HTTPClient.shared.send(HTTPRequest(url: server.baseURL + "/stats"))
        let stats = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Int])
        return try #require(stats["inputs_ok"])
    }

    /// Copies the Qdrant collection `reference` into a new collection `copy`, created without metadata.
    static func copyQdrantCollection(_ store: StoreUnderTest) async throws {
        let qdrant = try #require(store.server).baseURL
        let headers = [("api-key", StoreUnderTest.apiKey), ("Content-Type", "application/json")]
        func call(_ method: String, _ path: String, _ body: String) async throws -> [String: Any] {
            let response = try await HTTPClient.shared.send(
                HTTPRequest(method: method, url: qdrant + path, headers: headers, body: Array(body.utf8))
            )
            #expect(response.status == 200, "\(method) \(path): \(response.bodyText)")
            return try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        }
        _ = try await call("PUT", "/collections/copy", #"{"vectors":{"size":32,"distance":"Cosine"}}"#)
        _ = try await call(
            "PUT",
            "/collections/copy/index?wait=true",
            #"{"field_name":"document_key","field_schema":"keyword"}"#
        )
        let page = try await call(
            "POST",
            "/collections/reference/points/scroll",
            #"{"limit":10000,"with_payload":true,"with_vector":true}"#
        )
        let points = try #require((page["result"] as? [String: Any])?["points"] as? [[String: Any]])
        #expect(!points.isEmpty)
        for start in stride(from: 0, to: points.count, by: 256) {
            let batch = points[start..<min(start + 256, points.count)].map {
                ["id": $0["id"]!, "vector": $0["vector"]!, "payload": $0["payload"]!]
            }
            let body = String(decoding: try JSONSerialization.data(withJSONObject: ["points": batch]), as: UTF8.self)
            _ = try await call("PUT", "/collections/copy/points?wait=true", body)
        }

    }

    /// Copies the Chroma collection `c_reference` into a new collection `c_copy`, created without metadata.
    static func copyChromaCollection(_ store: StoreUnderTest) async throws {
        let database = try #require(store.endpoint).baseURL + "/api/v2/tenants/sluice_tests/databases/db_tests"
        func call(_ method: String, _ path: String, _ body: Any?) async throws -> [String: Any] {
            let response = try await HTTPClient.shared.send(
                HTTPRequest(
                    method: method,
                    url: database + path,
                    headers: [("Content-Type", "application/json")],
                    body: try body.map { [UInt8](try JSONSerialization.data(withJSONObject: $0)) } ?? []
                )
            )
            #expect([200, 201].contains(response.status), "\(method) \(path): \(response.bodyText)")
            return try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        }
        let source = try await call("GET", "/collections/c_reference", nil)
        let sourceID = try #require(source["id"] as? String)
        let copied = try await call(
            "POST",
            "/collections",
            ["name": "c_copy", "configuration": ["hnsw": ["space": "cosine"]]] as [String: Any]
        )
        let copyID = try #require(copied["id"] as? String)
        let records = try await call(
            "POST",
            "/collections/\(sourceID)/get",
            ["include": ["embeddings", "metadatas", "documents"], "limit": 10_000] as [String: Any]
        )
        let ids = try #require(records["ids"] as? [String])
        #expect(!ids.isEmpty)
        _ = try await call(
            "POST",
            "/collections/\(copyID)/add",
            [
                "ids": ids, "embeddings": records["embeddings"]!, "metadatas": records["metadatas"]!,
                "documents": records["documents"]!,
            ] as [String: Any]
        )
    }

    /// A new state on the collection `copy` (another tool's copy of `reference`'s records, with no record of
    /// the embedder): nothing adopted, every chunk embedded again (as many texts as the reference's load,
    /// `embedded`), the reason said once, the store as a fresh load leaves it.
    func expectLoadedAsFresh(
        _ ws: Workspace,
        _ store: StoreUnderTest,
        _ server: StandInServer,
        copy name: String,
        reference: Workspace.Target,
        embedded first: Int,
        _ keys: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let copy = store.target(ws, name, sinkName: name)
        let statsURL = ws.file("\(name).stats.json")
        let before = try await Self.inputs(server)
        let result = try await ws.sluice(
            ws.runArguments(copy, adopt.embedderSettings(server) + ["--stats-json", statsURL.path]),
            environment: [AdoptFromStoreCLITests.keyVariable: adopt.key],
            timeout: .seconds(180)
        )
        #expect(result.exitCode == 0, "\(result)", sourceLocation: sourceLocation)
        #expect(
            try await Self.inputs(server) - before == first,
            "every chunk embedded again",
            sourceLocation: sourceLocation
        )
        let said = result.stderr.components(separatedBy: "no record of the embedder that made them").count - 1
        #expect(said == 1, "the reason is said once: \(result.stderr)", sourceLocation: sourceLocation)
        #expect((try ws.stats(statsURL)["vectors_adopted"] ?? 0) == 0, sourceLocation: sourceLocation)
        #expect(try await ws.status(copy).documents == ["indexed": keys.count], sourceLocation: sourceLocation)
        expectSameExport(
            try await ws.export(copy),
            try await ws.export(reference),
            "the copy after a fresh load",
            sourceLocation: sourceLocation
        )
    }
}
