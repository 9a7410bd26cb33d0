import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// The background build inserts on threads of its own at a lowered priority (``LocalANNIndex/Workers``,
/// `sluice_hnsw_add_lowered`): the caller only waits, and the graph is the same whole graph.
@Suite struct LocalANNIndexWorkersTests {
    @Test(
        "inserts on lowered threads of their own (one or two) add every vector, replace re-sent labels and leave a graph where each vector finds itself",
        arguments: [1, 2]
    )
    func loweredInsertsBuildTheWholeGraph(threads: Int) throws {
        var generator = ClusteredVectors(dimensions: 16, clusters: 20, seed: 0x10E2)
        var section = PipelineConfiguration.Sink()
        section.hnsw.efConstruction = 40
        let index = try LocalANNIndex(dimensions: 16, capacity: 1024, settings: .init(section: section))
        let workers = LocalANNIndex.Workers(threads: threads, niceness: LocalANNBuilder.backgroundNiceness)
        var vectors: [[Float]] = []
        while vectors.count < 3_000 {
            let next = generator.next(256)
            let first = UInt64(vectors.count)
            try index.add(next.enumerated().map { (first + UInt64($0.offset), $0.element) }, workers: workers)
            vectors += next
            #expect(index.elementCount == vectors.count)
        }
        // Labels sent again get their new vectors (no new elements).
        let replaced = generator.next(100)
        try index.add(replaced.enumerated().map { (UInt64($0.offset), $0.element) }, workers: workers)
        vectors.replaceSubrange(0..<100, with: replaced)
        #expect(index.elementCount == 3_072)
        for label in stride(from: 0, to: vectors.count, by: 31) {
            let found = index.search(vectors[label], k: 1, breadth: 64)
            #expect(found.first?.label == UInt64(label))
        }
    }
}
