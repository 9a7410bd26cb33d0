import Foundation
import SluiceClient
import SluiceCore
import Testing

/// `GET /v1/documents` and `/v1/documents/{key}` of a running `sluice serve` follow a promote as searches
/// do (docs/GENERATIONS.md): the document records and the chunks come from the active generation, never
/// the records of one and the chunks of another.
@Suite(.serialized)
struct GenerationServeDocumentsCLITests {
    @Test("after a promote, serve's documents and their chunks are the new active generation's")
    func documentsFollowThePromote() async throws {
        let ws = try Workspace("generation-serve-documents")
        defer { ws.cleanUp() }
        try Corpus.write(count: 6, into: ws.corpus, seed: 0x6E_0041)
        let main = ws.target("main")
        try await ws.run(main, expecting: 0)
        let server = try await ServeProcess.start(ws, main)
        let client = server.client()
        let query = "configuration file"
        let old = try await client.search(SearchRequest(query: query, k: 5, mode: "vector")).results.map(\.id)

        #expect(
            try await GenerationCLITests.generation(ws, "start", main, GenerationCLITests.candidateSettings).exitCode
                == 0
        )
        try await ws.run(main, expecting: 0)
        let promoted = try await GenerationCLITests.generation(ws, "promote", main)
        #expect(promoted.exitCode == 0, "\(promoted)")
        let expected = try await GenerationServeCLITests.cliSearch(ws, main, query)
        try #require(expected != old, "the two generations answer alike: the test proves nothing")
        // Wait for serve to follow (its searches switch), then read the documents.
        let deadline = ContinuousClock.now + .seconds(120)
        while ContinuousClock.now < deadline {
            if try await client.search(SearchRequest(query: query, k: 5, mode: "vector")).results.map(\.id)
                == expected
            {
                break
            }
        }

        // What the new active generation holds, by document: its chunks' texts in order.
        var byDocument: [String: [VectorRecord]] = [:]
        for record in try Export.records(try await ws.export(main)) {
            byDocument[record.documentKey, default: []].append(record)
        }
        #expect(byDocument.count == 6)
        let page = try await client.documents(limit: 100)
        #expect(Set(page.documents.map(\.key)) == Set(byDocument.keys))
        for summary in page.documents {
            let records = try #require(byDocument[summary.key]).sorted { $0.ordinal < $1.ordinal }
            #expect(summary.chunks == records.count, "\(summary.key): the list counts another generation's chunks")
            let detail = try await client.document(key: summary.key, chunkLimit: 1000)
            #expect(detail.document.chunks == records.count, "\(summary.key)")
            #expect(
                detail.chunks?.map(\.text) == records.map(\.text),
                "\(summary.key): chunks of another generation"
            )
        }
        // /metrics names the generations and counts the active one's documents.
        let metrics = String(decoding: try await server.exchange("GET", "/metrics").body, as: UTF8.self)
        #expect(metrics.contains("sluice_generation_info{role=\"active\",generation=\"g1\"} 1"), "\(metrics)")
        #expect(metrics.contains("sluice_generation_info{role=\"previous\",generation=\"g0\"} 1"), "\(metrics)")
        #expect(metrics.contains("sluice_documents 6"), "\(metrics)")
        #expect(metrics.contains("sluice_vectors \(byDocument.values.map(\.count).reduce(0, +))"), "\(metrics)")
        let stopped = try await server.stop()
        #expect(stopped.exitCode == 0, "\(stopped)")
    }
}
