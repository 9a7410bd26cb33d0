import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// The pgvector sink against a real PostgreSQL 18 + pgvector (Sources/SluiceTesting/StandIns/pgvector_server.py):
/// what the end-to-end tests do not reach (halfvec over 2,000 dimensions, the staging path after the
/// bulk path, the dimension guard, the HNSW index).
@Suite(.serialized)
struct PgvectorSinkTests {
    @Test(
        "over 2,000 dimensions the column is halfvec; re-sent batches take the staging path; a dimension change is refused"
    )
    func halfvecAndIdempotence() async throws {
        let postgres = try await PostgresForTest.launch()
        defer { postgres.stop() }
        let settings = postgres.settings(table: "wide")
        let sink = try PgvectorSink(settings: settings)
        let identity = EmbedderIdentity(provider: "test", model: "wide", dimensions: 2100)
        try await sink.prepare(embedder: identity)
        let records = (0..<3).map { i in
            VectorRecord(
                id: VectorID(rawValue: String(format: "%032x", i + 1)),
                documentKey: "doc",
                ordinal: i,
                text: "chunk\t\(i)\n",
                vector: (0..<2100).map { Float(($0 + i) % 7) / 8 },
                metadata: ["tokens": "2"]
            )
        }
        try await sink.upsert(records)
        try await sink.upsert(records)  // the same batch again: 23505 on the bulk path, then the staging path
        try await sink.finish()
        let info = try await sink.info()
        #expect(info.count == 3)
        #expect(info.dimensions == 2100)
        #expect(info.details["column"] == "halfvec(2100)")
        #expect(info.details["hnsw index"] == "wide_embedding_hnsw")
        #expect(info.metric == "cosine")
        let collected = ExportCollector()
        try await sink.exportAll { collected.append($0) }
        // Multiples of 1/8 are exact in half precision.
        #expect(collected.records == records)
        let hits = try await sink.search(records[1].vector, k: 2)
        #expect(hits.first?.record.id == records[1].id)
        #expect(abs((hits.first?.score ?? 0) - 1) < 1e-3)

        let narrower = try PgvectorSink(settings: settings)
        await #expect(throws: SluiceError.self) {
            try await narrower.prepare(embedder: EmbedderIdentity(provider: "test", model: "wide", dimensions: 384))
        }
        try await sink.drop()
        #expect(try await sink.info().exists == false)
    }

    @Test(
        "an upper-case sink.table is one case-sensitive table everywhere: info, export, ids, re-embed clearing and drop see it; its folded twin stays apart"
    )
    func mixedCaseTableName() async throws {
        let postgres = try await PostgresForTest.launch()
        defer { postgres.stop() }
        func sink(_ table: String) throws -> PgvectorSink {
            try PgvectorSink(settings: postgres.settings(table: table))
        }
        let identity = EmbedderIdentity(provider: "test", model: "m", dimensions: 4)
        func records(_ count: Int, key: String) -> [VectorRecord] {
            (0..<count).map { i in
                VectorRecord(
                    id: VectorID(rawValue: String(format: "%032x", i + 1)),
                    documentKey: key,
                    ordinal: i,
                    text: "t\(i)",
                    vector: [Float(i), 1, 0, 0.5]
                )
            }
        }
        let mixed = try sink("public.Mixed_Case")
        let folded = try sink("mixed_case")
        try await mixed.prepare(embedder: identity)
        try await mixed.upsert(records(3, key: "upper"))
        try await mixed.finish()
        try await folded.prepare(embedder: identity)
        try await folded.upsert(records(2, key: "lower"))
        try await folded.finish()

        let info = try await mixed.info()
        #expect(info.exists, "sink info finds the table")
        #expect(info.count == 3)
        #expect(info.dimensions == 4)
        #expect(try await mixed.listIDs()?.count == 3)
        #expect(try await mixed.existing(records(3, key: "upper").map(\.id)).count == 3)
        let collected = ExportCollector()
        try await mixed.exportAll { collected.append($0) }
        #expect(collected.records.map(\.documentKey) == ["upper", "upper", "upper"])
        #expect(try await mixed.search([2, 1, 0, 0.5], k: 1).first?.record.documentKey == "upper")
        // A second open (the next run) checks the existing table instead of taking it for a new one.
        try await sink("public.Mixed_Case").prepare(embedder: identity)

        try await mixed.removeAll()  // what --reembed does
        #expect(try await mixed.count() == 0)
        #expect(try await folded.count() == 2, "the folded name is another table")
        try await mixed.drop()
        #expect(try await mixed.info().exists == false)
        #expect(try await folded.info().exists)
        try await folded.drop()
    }
}
