import Foundation
import SluiceCore
import SluiceLMDB
import SluiceTesting
import Testing

@testable import SluiceSinks

/// The graph's search scores its candidates from the records' stored vectors — a record on overflow pages of
/// its own copied from the data file, never mapped — and decodes only the winners: its hits and scores must be
/// the scan's, bit for bit, in the scan's order, for records stored inline in LMDB's pages and on overflow pages
/// of their own, and for records replaced or deleted after the graph's generation (read by the change log).
@Suite struct LocalSinkANNScoresTests {
    static let dimensions = LocalSinkANNTests.dimensions

    /// Records whose text makes them larger than half a page (on overflow pages) when `long`.
    static func records(_ vectors: [[Float]], from start: Int = 0, long: Bool) -> [VectorRecord] {
        LocalSinkANNTests.records(vectors, from: start).map { record in
            var record = record
            if long { record.text = String(repeating: "a long chunk of text \(record.id.rawValue) ", count: 150) }
            return record
        }
    }

    /// A store in `folder` with a saved graph of 600 clustered records (long ones when `long`), and the generator
    /// that made them, for more from the same clusters.
    static func seeded(
        _ folder: URL,
        nodes: PipelineConfiguration.Sink.HNSW.Nodes,
        long: Bool
    ) async throws -> (ClusteredVectors, [VectorRecord]) {
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 10, seed: 0x5C0E)
        let first = Self.records(generator.next(600), long: long)
        try await LocalSinkANNTests.seed(folder, first, nodes: nodes)
        return (generator, first)
    }

    @Test(
        "graph hits carry the scan's scores in its order, for records inline and on overflow pages, replaced or deleted after the graph's generation",
        arguments: LocalSinkANNTests.nodeKinds,
        [false, true]
    )
    func hitsAreTheScans(nodes: PipelineConfiguration.Sink.HNSW.Nodes, long: Bool) async throws {
        let folder = LocalSinkANNTests.folder()
        defer { TemporaryDirectory.remove(folder) }
        var (generator, first) = try await Self.seeded(folder, nodes: nodes, long: long)
        // After the saved graph (a run that did not save again): 50 records replaced by other vectors (same
        // ids), 50 deleted.
        let replaced = Self.records(generator.next(50), long: long)
        do {
            let writer = try LocalSinkANNTests.open(folder, nodes: nodes)
            try await LocalSinkANNTests.prepare(writer)
            try await writer.upsert(replaced)
            try await writer.delete(first[100..<150].map(\.id))
        }
        let reader = try LocalSinkANNTests.open(folder, readOnly: true, nodes: nodes)
        // Queries near the clusters, at the replaced records' new vectors (the graph holds their old ones)
        // and at the deleted ones'.
        let queries = generator.next(20) + replaced.prefix(10).map(\.vector) + first[100..<110].map(\.vector)
        for query in queries {
            let hits = try await reader.search(query, k: 10)
            let scanned = try reader.exactSearch(query, k: 10)
            #expect(hits.map(\.record.id) == scanned.map(\.record.id))
            #expect(hits.map(\.score) == scanned.map(\.score), "the stored vector's cosine, as the scan's")
            #expect(hits.map(\.record) == scanned.map(\.record), "the winners decoded whole")
        }
        #expect(reader.annState.live?.index?.elementCount == 600, "the saved graph, with the change log")
    }

    @Test(
        "a graph search copies its candidates on overflow pages from the file (their pages never mapped), and only those",
        arguments: LocalSinkANNTests.nodeKinds,
        [false, true]
    )
    func largeCandidatesAreCopied(nodes: PipelineConfiguration.Sink.HNSW.Nodes, long: Bool) async throws {
        let folder = LocalSinkANNTests.folder()
        defer { TemporaryDirectory.remove(folder) }
        var (generator, _) = try await Self.seeded(folder, nodes: nodes, long: long)
        let reader = try LocalSinkANNTests.open(folder, readOnly: true, nodes: nodes)
        let queries = generator.next(10)
        let before = reader.environment.valuesCopied
        for query in queries {
            let hits = try await reader.search(query, k: 10)
            #expect(hits.count == 10)
        }
        let copied = reader.environment.valuesCopied - before
        #expect(reader.annState.live?.index?.elementCount == 600, "the saved graph is loaded")
        if long {
            // Each search scores k + max(k, 8) candidates, every one a copy (a scan would copy all 600).
            #expect(copied == queries.count * LocalANNIndex.candidates(for: 10), "each candidate copied once")
        } else {
            #expect(copied == 0, "records in their leaf pages are read through the map, never with pread")
        }
    }
}
