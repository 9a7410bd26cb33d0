import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// The graph keeps its vectors as 8-bit integers (`CHNSW`) and the store ranks the graph's candidates by the
/// float vectors in LMDB: answers stay the scan's where the graph reaches every node, and a graph saved with
/// float vectors (by an older Sluice) is never loaded into the 8-bit graph, but rebuilt.
@Suite struct LocalANNQuantizedTests {
    @Test(
        "the graph holds its vectors in 8 bits, yet a search that visits every node answers as the exact scan does, near-ties included"
    )
    func quantizedGraphKeepsExactAnswers() async throws {
        let folder = LocalSinkANNTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // Tight clusters: neighbours' cosines to a query differ by less than 8-bit rounding changes them.
        var generator = ClusteredVectors(dimensions: 384, clusters: 4, spread: 0.3, seed: 0x0818)
        var section = PipelineConfiguration.Sink()
        section.hnsw.exactBelow = 0
        section.hnsw.efSearch = 5000  // more than the store holds: every node is visited
        let sink = try LocalSink(directory: folder, index: .init(section: section))
        try await LocalSinkANNTests.prepare(sink, dimensions: 384)
        try await sink.upsert(LocalSinkANNTests.records(generator.next(2000)))
        sink.settleIndex()  // the follower has applied the write
        #expect(sink.annState.live?.index?.elementCount == 2000)
        for query in generator.next(40) {
            for k in [1, 10] {
                let found = try await sink.search(query, k: k).map(\.record.id)
                #expect(found == (try sink.exactSearch(query, k: k)).map(\.record.id))
            }
        }
    }

    @Test(
        "a graph saved with float vectors (an older Sluice) is not loaded: searches scan, the next writer rebuilds it"
    )
    func floatGraphFromAnOlderVersionIsRebuilt() async throws {
        let folder = LocalSinkANNTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        var generator = ClusteredVectors(dimensions: LocalSinkANNTests.dimensions, clusters: 10, seed: 0xF10A)
        let records = LocalSinkANNTests.records(generator.next(300))
        try await LocalSinkANNTests.seed(folder, records)
        let saved = try #require(try LocalSinkANNTests.indexFiles(folder).first)
        // The same labels (0… in upsert order) and vectors, in hnswlib 0.6.2's file layout with float elements.
        try Self.floatGraphFile(records.map(\.vector)).write(to: folder.appendingPathComponent(saved))

        let reader = try LocalSinkANNTests.open(folder, readOnly: true)
        for query in generator.next(10) {
            let hits = try await reader.search(query, k: 10)
            #expect(hits.map(\.record.id) == (try reader.exactSearch(query, k: 10)).map(\.record.id))
        }
        #expect(reader.annState.live == nil, "the float graph is not loaded: searches scan")

        let writer = try LocalSinkANNTests.open(folder)
        try await LocalSinkANNTests.prepare(writer)  // starts the build from a snapshot, beside the writes
        writer.settleIndex()
        #expect(writer.annState.live?.index?.elementCount == 300, "rebuilt from LMDB")
        try await writer.finish()
        let files = try LocalSinkANNTests.indexFiles(folder)
        // Built from a snapshot without new labels, so at the same generation: the file is replaced.
        #expect(files == [saved], "the rebuilt graph is saved in the float one's place: \(files)")
        let reader2 = try LocalSinkANNTests.open(folder, readOnly: true)
        _ = try await reader2.search(generator.next(), k: 10)
        #expect(reader2.annState.live?.index?.elementCount == 300, "the saved graph loads")
        #expect(try await LocalSinkANNTests.recall(writer, queries: generator.next(50)) >= 0.95)
    }

    /// A level-0-only hnswlib 0.6.2 index file (`saveIndex`'s layout) holding `vectors` as floats under labels
    /// 0…, with `m` 16 and no links: what a Sluice before 8-bit vectors saved, as far as the loader reads it.
    static func floatGraphFile(_ vectors: [[Float]]) -> Data {
        let dimensions = vectors[0].count
        let maxM0 = 32
        let linksLevel0 = maxM0 * 4 + 4
        let element = linksLevel0 + dimensions * 4 + 8
        var data = Data()
        func append<T>(_ value: T) { withUnsafeBytes(of: value) { data.append(contentsOf: $0) } }
        for value in [0, vectors.count, vectors.count, element, linksLevel0 + dimensions * 4, linksLevel0] {
            append(UInt(value))  // offsetLevel0, max and current elements, element size, label and data offsets
        }
        append(Int32(0))  // top level
        append(UInt32(0))  // entry point
        for value in [16, maxM0, 16] { append(UInt(value)) }  // maxM, maxM0, M
        append(1 / log(16.0))  // level multiplier
        append(UInt(100))  // ef_construction
        for (label, vector) in vectors.enumerated() {
            data.append(contentsOf: [UInt8](repeating: 0, count: linksLevel0))  // no neighbours
            for value in vector { append(value) }
            append(UInt(label))
        }
        for _ in vectors { append(UInt32(0)) }  // no upper-level links
        return data
    }
}
