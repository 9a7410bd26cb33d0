import Foundation
import SluiceCore
import SluiceHTTP
import SluiceTesting
import Testing

@testable import SluiceSinks

/// A Qdrant in strict mode (`unindexed_filtering_retrieve` and `unindexed_filtering_update` false, as Qdrant
/// Cloud runs) refuses a filter on a payload field without a payload index. The sink creates the indexes of every
/// field it filters on: the shared generation records' `key` and `version`, the collection's `document_key`,
/// `ordinal` and `metadata.folders`.
@Suite struct QdrantStrictModeTests {
    static func strictServer() async throws -> StandInServer {
        try await StandInServer.launch(script: "qdrant_standin.py", arguments: ["--strict-mode"])
    }

    /// The sink of the collection `docs`.
    static func sink(_ server: StandInServer) -> QdrantSink { QdrantConditionalUpdateTests.sink(server) }

    /// Chunk `index` of `key`, in the folder of the key's first two characters.
    static func record(_ index: Int, of key: String) -> VectorRecord {
        VectorRecord(
            id: VectorID(rawValue: String(format: "%032x", index + 1)),
            documentKey: key,
            ordinal: 0,
            text: key,
            vector: [1, Float(index)],
            metadata: ["folders": .strings([String(key.prefix(2))])]
        )
    }

    /// Creates the collection `name` with no payload index, as an older Sluice did.
    static func createWithoutIndexes(_ server: StandInServer, _ name: String, size: Int) async throws {
        let http = StoreHTTP(baseURL: server.baseURL, headers: [], maxRetries: 0, timeout: .seconds(30), label: "test")
        let body = #"{"vectors":{"size":\#(size),"distance":"Cosine"}}"#
        try await http.send("PUT", "/collections/\(name)", json: Array(body.utf8))
    }

    @Test("the stand-in refuses a filter on an unindexed field as Qdrant does: 400, \"Index required but not found\"")
    func standInRefusesUnindexedFilters() async throws {
        let server = try await Self.strictServer()
        defer { server.stop() }
        let http = StoreHTTP(baseURL: server.baseURL, headers: [], maxRetries: 0, timeout: .seconds(30), label: "test")
        try await http.send("PUT", "/collections/c", json: Array(#"{"vectors":{"size":1,"distance":"Dot"}}"#.utf8))
        let scroll = Array(#"{"filter":{"must":[{"key":"key","match":{"value":"manifest"}}]}}"#.utf8)
        let refused = try await http.send("POST", "/collections/c/points/scroll", json: scroll, accepting: [400])
        #expect(refused.status == 400)
        #expect(
            refused.bodyText.contains(
                #"Index required but not found for \"key\" of one of the following types: [keyword]"#
            ),
            "\(refused.bodyText)"
        )
        try await http.send(
            "PUT",
            "/collections/c/index?wait=true",
            json: Array(#"{"field_name":"key","field_schema":"keyword"}"#.utf8)
        )
        // Again with the same schema: Qdrant answers 200.
        try await http.send(
            "PUT",
            "/collections/c/index?wait=true",
            json: Array(#"{"field_name":"key","field_schema":"keyword"}"#.utf8)
        )
        #expect(try await http.send("POST", "/collections/c/points/scroll", json: scroll).status == 200)
    }

    @Test("sharded generation records on a strict Qdrant: a manifest written and read, a part written and listed")
    func generationRecordsOnAStrictServer() async throws {
        let server = try await Self.strictServer()
        defer { server.stop() }
        let sink = Self.sink(server)
        #expect(try await sink.writeSharedRecord("manifest", Data("{\"a\":1}".utf8), expecting: 0))
        #expect(try await !sink.writeSharedRecord("manifest", Data("{\"a\":2}".utf8), expecting: 0))
        #expect(try await sink.writeSharedRecord("manifest", Data("{\"a\":3}".utf8), expecting: 1))
        #expect(try await Self.sink(server).sharedRecord("manifest")?.value == Data("{\"a\":3}".utf8))
        #expect(try await sink.writeSharedRecord("parts/g2/0-of-2", Data("p0".utf8), expecting: nil))
        #expect(try await sink.writeSharedRecord("parts/g2/0-of-2", Data("p0'".utf8), expecting: nil))
        #expect(try await sink.sharedRecords(prefix: "parts/") == ["parts/g2/0-of-2": Data("p0'".utf8)])
    }

    @Test("a generations collection an older Sluice made without indexes gets them before the first filtered read")
    func existingCollectionWithoutIndexes() async throws {
        let server = try await Self.strictServer()
        defer { server.stop() }
        try await Self.createWithoutIndexes(server, "docs_generations", size: 1)
        let sink = Self.sink(server)
        #expect(try await sink.sharedRecord("manifest") == nil)
        #expect(try await sink.writeSharedRecord("manifest", Data("m1".utf8), expecting: 0))
        #expect(try await Self.sink(server).sharedRecord("manifest")?.version == 1)
    }

    @Test("the collection on a strict Qdrant: a document deleted by its key, a folder filter searched")
    func collectionFiltersOnAStrictServer() async throws {
        let server = try await Self.strictServer()
        defer { server.stop() }
        let sink = Self.sink(server)
        try await sink.prepare(embedder: EmbedderIdentity(provider: "test", model: "strict", dimensions: 2))
        try await sink.upsert(["a/x.md", "a/y.md", "b/z.md"].enumerated().map { Self.record($0, of: $1) })
        let inA = try await sink.search(
            SearchRequest(vector: [1, 0], k: 10, filter: try SearchFilter(parsing: "document_key ^= \"a/\""))
        )
        #expect(Set(inA.map(\.record.documentKey)) == ["a/x.md", "a/y.md"])
        let first = try await sink.search(
            SearchRequest(
                vector: [1, 0],
                k: 10,
                filter: try SearchFilter(parsing: "ordinal = 0 and document_key = \"b/z.md\"")
            )
        )
        #expect(first.map(\.record.documentKey) == ["b/z.md"])
        try await sink.deleteDocument("a/x.md")
        #expect(try await sink.count() == 2)
    }

    @Test("a collection an older Sluice made without the folder index: a folder search creates it and is answered")
    func existingCollectionSearchedByFolder() async throws {
        let server = try await Self.strictServer()
        defer { server.stop() }
        try await Self.createWithoutIndexes(server, "docs", size: 2)
        let sink = Self.sink(server)
        try await sink.upsert([Self.record(0, of: "a/x.md")])
        let hits = try await sink.search(
            SearchRequest(vector: [1, 0], k: 10, filter: try SearchFilter(parsing: "document_key ^= \"a/\""))
        )
        #expect(hits.map(\.record.documentKey) == ["a/x.md"])
    }
}
