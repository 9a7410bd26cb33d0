import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// Qdrant and Pinecone record the embedder their vectors came from and read a document's vectors back for a
/// new or lost state (docs/OPERATIONS.md, "A lost state, re-sharding"), against their validating stand-ins.
@Suite(.serialized)
struct HTTPStoreAdoptionTests {
    static let small = EmbedderIdentity(provider: "openai", model: "text-embedding-3-small", dimensions: 4)
    static let large = EmbedderIdentity(provider: "openai", model: "text-embedding-3-large", dimensions: 4)

    /// Vectors by id, as `storedVectors(ofDocument:)` answers.
    static func vectors(_ records: [VectorRecord]) -> [VectorID: [Float]] {
        Dictionary(uniqueKeysWithValues: records.map { ($0.id, $0.vector) })
    }

    @Test("Qdrant: the collection's metadata names the embedder; a document's vectors come back by its key")
    func qdrantRecordsAndReadsBack() async throws {
        let server = try await StandInServer.launch(script: "qdrant_standin.py", arguments: ["--api-key", "q-key"])
        defer { server.stop() }
        func sink(_ collection: String) -> QdrantSink {
            var settings = QdrantSink.Settings(url: server.baseURL, apiKey: "q-key")
            settings.collection = collection
            return QdrantSink(settings: settings)
        }
        let recorded = sink("recorded")
        #expect(try await recorded.storedVectors(ofDocument: "a.txt") == nil, "nothing is adopted before prepare")
        try await recorded.prepare(embedder: Self.small)
        #expect(try await recorded.info().embedder == Self.small.description)
        #expect(try await recorded.storedVectors(ofDocument: "a.txt") == [:])
        let a = HTTPStoreSinkTests.records("a.txt", count: 1_200)  // more than one scroll page
        let b = HTTPStoreSinkTests.records("b.txt", count: 3)
        try await recorded.upsert(a + b)
        #expect(try await recorded.storedVectors(ofDocument: "a.txt") == Self.vectors(a))
        #expect(try await recorded.storedVectors(ofDocument: "b.txt") == Self.vectors(b))
        #expect(try await recorded.storedVectors(ofDocument: "c.txt") == [:])

        // Another model of the same dimension: refused, as Chroma refuses it.
        let other = sink("recorded")
        await #expect(throws: SluiceError.self) { try await other.prepare(embedder: Self.large) }
        #expect(try await other.storedVectors(ofDocument: "a.txt") == nil)

        // A collection another tool wrote (no metadata): searched and written as before, never adopted from.
        let http = StoreHTTP(
            baseURL: server.baseURL,
            headers: [("api-key", "q-key")],
            maxRetries: 0,
            timeout: .seconds(10),
            label: "raw"
        )
        try await http.send(
            "PUT",
            "/collections/foreign",
            json: Array(#"{"vectors":{"size":4,"distance":"Cosine"}}"#.utf8)
        )
        let foreign = sink("foreign")
        try await foreign.upsert(b)
        try await foreign.prepare(embedder: Self.small)
        #expect(try await foreign.storedVectors(ofDocument: "b.txt") == nil)
        #expect(foreign.readBackRefusal?.contains("no record of the embedder") == true)
        #expect(try await foreign.info().embedder == nil, "vectors nobody vouched for are not recorded as ours")

        // An empty collection without a record (or with another's) gets this embedder's on first use.
        try await http.send(
            "PUT",
            "/collections/empty",
            json: Array(#"{"vectors":{"size":4,"distance":"Cosine"},"metadata":{"sluice_embedder":"x/y@4"}}"#.utf8)
        )
        let empty = sink("empty")
        try await empty.prepare(embedder: Self.small)
        #expect(try await empty.info().embedder == Self.small.description)
        #expect(try await empty.storedVectors(ofDocument: "a.txt") == [:])
        #expect(try await HTTPStoreSinkTests.stats(server)["invalid"] == 0)
    }

    @Test("Pinecone: each namespace's embedder is an index tag; a document's vectors come back by id prefix")
    func pineconeRecordsAndReadsBack() async throws {
        let server = try await StandInServer.launch(script: "pinecone_standin.py", arguments: ["--api-key", "p-key"])
        defer { server.stop() }
        func sink(_ namespace: String) -> PineconeSink {
            var settings = PineconeSink.Settings(apiKey: "p-key", index: "unit")
            settings.controlURL = server.baseURL
            settings.namespace = namespace
            return PineconeSink(settings: settings)
        }
        let first = sink("one")
        try await first.prepare(embedder: Self.small)
        #expect(try await first.info().embedder == Self.small.description)
        // A key that continues another's with `#` shares its id prefix: each gets only its own records.
        let a = HTTPStoreSinkTests.records("docs/a", count: 130)  // more than one list page
        let b = HTTPStoreSinkTests.records("docs/a#b", count: 2)
        try await first.upsert(a + b)
        #expect(try await first.storedVectors(ofDocument: "docs/a") == Self.vectors(a))
        #expect(try await first.storedVectors(ofDocument: "docs/a#b") == Self.vectors(b))
        #expect(try await first.storedVectors(ofDocument: "docs/c") == [:])

        // Another namespace of the same index holds another model's vectors: its own tag.
        let second = sink("two")
        try await second.prepare(embedder: Self.large)
        try await second.upsert(b)
        #expect(try await second.storedVectors(ofDocument: "docs/a#b") == Self.vectors(b))
        await #expect(throws: SluiceError.self) { try await sink("one").prepare(embedder: Self.large) }
        await #expect(throws: SluiceError.self) { try await sink("two").prepare(embedder: Self.small) }

        // An index created by another tool, written without a tag: never adopted from.
        let control = StoreHTTP(
            baseURL: server.baseURL,
            headers: [("Api-Key", "p-key"), ("X-Pinecone-Api-Version", PineconeSink.apiVersion)],
            maxRetries: 0,
            timeout: .seconds(10),
            label: "raw"
        )
        try await control.send(
            "POST",
            "/indexes",
            json: Array(#"{"name":"foreign","dimension":4,"metric":"cosine","spec":{"serverless":{}}}"#.utf8)
        )
        var settings = PineconeSink.Settings(apiKey: "p-key", index: "foreign")
        settings.controlURL = server.baseURL
        settings.namespace = "ns"
        let foreign = PineconeSink(settings: settings)
        try await foreign.upsert(b)
        try await foreign.prepare(embedder: Self.small)
        #expect(try await foreign.storedVectors(ofDocument: "docs/a#b") == nil)
        #expect(foreign.readBackRefusal?.contains("no record of the embedder") == true)
        #expect(try await foreign.info().embedder == nil)
        #expect(try await HTTPStoreSinkTests.stats(server)["invalid"] == 0)
    }

    @Test(
        "Pinecone: an identity is a tag value Pinecone accepts, read back as written",
        arguments: [
            EmbedderIdentity(provider: "openai", model: "text-embedding-3-small", dimensions: 1536),
            EmbedderIdentity(provider: "ollama", model: "nomic-embed-text:latest_v1.5 +x/é", dimensions: 768),
            EmbedderIdentity(provider: "openai", model: String(repeating: "m", count: 130), dimensions: 8),
        ]
    )
    func pineconeTagValues(_ identity: EmbedderIdentity) throws {
        let value = PineconeSink.embedderTagValue(identity)
        #expect(value.count <= 120)
        #expect(
            value.utf8.allSatisfy { byte in
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || ";@_-.+ ".utf8.contains(byte)
            }
        )
        if identity.model.count > 100 {
            // Escaped, it would pass 120 characters: its digest stands for it (compared, never displayed).
            #expect(value.hasPrefix("sha256;"))
            #expect(PineconeSink.embedder(tagValue: value) == nil)
        } else {
            #expect(PineconeSink.embedder(tagValue: value) == identity.description)
        }
    }
}
