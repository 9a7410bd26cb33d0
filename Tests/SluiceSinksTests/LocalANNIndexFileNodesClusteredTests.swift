import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// The file graph's trained codes on tightly clustered 384-d vectors (session 35, docs/LOCAL_INDEX.md, "The file
/// graph's codes on tight clusters"): inside a cluster the vectors differ by isotropic noise, the true top 10
/// lie within ~0.02 of inner product of the 100th, and 48-byte codes (8 dimensions a byte) err by ~0.06, so
/// they ranked the beam badly. The store's code size (96 bytes: 4 dimensions a byte) keeps the graph in
/// memory's recall at each graph's `auto` breadth. Behaviour only, never timing; fixed seeds (one insert
/// thread builds the same file graph every time).
@Suite struct LocalANNIndexFileNodesClusteredTests {
    static let dimensions = 384

    static func recall(_ index: LocalANNIndex, _ vectors: [[Float]], _ queries: [[Float]], breadth: Int) -> Double {
        var total = 0.0
        for query in queries {
            let exact = Set(LocalANNIndexFileNodesTests.exact(query, vectors, k: 10))
            let found = Set(index.search(query, k: 20, breadth: breadth).prefix(10).map(\.label))
            total += Double(exact.intersection(found).count) / 10
        }
        return total / Double(queries.count)
    }

    @Test(
        "on 384-d vectors in two tight clusters, the file graph with the store's code size, its codes trained, finds the true top 10 as well as the graph in memory, each at its auto breadth"
    )
    func tightClustersKeepMemorysRecall() throws {
        let folder = try LocalANNIndexFileNodesTests.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 2, seed: 0xC1A5)
        let vectors = generator.next(4000)
        let queries = generator.next(50)

        // The store's code bytes (not the other tests' 24), trained at 500 labels, no record held.
        var section = PipelineConfiguration.Sink()
        section.hnsw.nodes = .file
        var fileSettings = LocalSink.IndexSettings(section: section)
        fileSettings.fileCodesFrom = 500
        fileSettings.fileResidentBytes = 0
        let file = try LocalANNIndexFileNodesTests.filled(
            folder,
            vectors,
            settings: fileSettings,
            capacity: vectors.count,
            threads: 1
        )
        #expect(file.codeBytes == LocalSink.IndexSettings.defaultFileCodeBytes, "the codes are trained")
        let fileBreadth = fileSettings.searchBreadth(vectors: vectors.count, codesTrained: true)

        section.hnsw.nodes = .memory
        let memorySettings = LocalSink.IndexSettings(section: section)
        let memory = try LocalANNIndexFileNodesTests.filled(
            nil,
            vectors,
            settings: memorySettings,
            capacity: vectors.count,
            threads: 1
        )
        let memoryBreadth = memorySettings.searchBreadth(vectors: vectors.count, codesTrained: false)

        let fileRecall = Self.recall(file, vectors, queries, breadth: fileBreadth)
        let memoryRecall = Self.recall(memory, vectors, queries, breadth: memoryBreadth)
        // With these seeds 48-byte codes (session 34's) gave 0.752 at 128 against memory's 0.874 at 64.
        #expect(
            fileRecall >= memoryRecall - 0.02,
            "recall@10 file \(fileRecall) at \(fileBreadth), memory \(memoryRecall) at \(memoryBreadth)"
        )
    }
}
