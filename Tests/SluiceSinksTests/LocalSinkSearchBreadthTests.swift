import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// `sink.hnsw.ef_search`: a number fixes the breadth of the graph's searches; `auto`, the default, widens
/// them as the store grows (an HNSW graph's recall at a fixed breadth falls with its size), and the breadth
/// is an argument of each search, not a setting of the shared graph. `sink.ivf.nprobe: auto` widens the IVF
/// index's searches by the same reasoning.
@Suite struct LocalSinkSearchBreadthTests {
    @Test("auto keeps 64 up to 250,000 vectors, then grows with the square root of the size, at most 1,024")
    func autoBreadthFollowsTheSize() {
        let auto = LocalSink.IndexSettings()
        #expect(auto.efSearch == nil)
        for codesTrained in [false, true] {  // the graph in memory has no codes: the same either way
            #expect(auto.searchBreadth(vectors: 0, codesTrained: codesTrained) == 64)
            #expect(auto.searchBreadth(vectors: 250_000, codesTrained: codesTrained) == 64)
            #expect(auto.searchBreadth(vectors: 250_001, codesTrained: codesTrained) == 65)
            #expect(auto.searchBreadth(vectors: 1_000_000, codesTrained: codesTrained) == 128)
            #expect(auto.searchBreadth(vectors: 4_000_000, codesTrained: codesTrained) == 256)
            #expect(auto.searchBreadth(vectors: 1_000_000_000, codesTrained: codesTrained) == 1024)
        }
        var fixed = LocalSink.IndexSettings()
        fixed.efSearch = 40
        #expect(fixed.searchBreadth(vectors: 1_000_000, codesTrained: false) == 40)
    }

    @Test(
        "with the nodes in a file, auto is memory's breadth until the graph's codes are trained, then 1.5 times it; a fixed ef_search stays fixed"
    )
    func autoBreadthWithTheNodesInAFile() {
        var section = PipelineConfiguration.Sink()
        section.hnsw.nodes = .file
        let file = LocalSink.IndexSettings(section: section)
        #expect(file.searchBreadth(vectors: 10_000, codesTrained: false) == 64)
        #expect(file.searchBreadth(vectors: 10_000, codesTrained: true) == 96)
        #expect(file.searchBreadth(vectors: 1_000_000, codesTrained: false) == 128)
        #expect(file.searchBreadth(vectors: 1_000_000, codesTrained: true) == 192)
        var noCodes = file
        noCodes.fileCodeBytes = 0
        #expect(noCodes.searchBreadth(vectors: 10_000, codesTrained: true) == 64)
        var fixed = file
        fixed.efSearch = 40
        #expect(fixed.searchBreadth(vectors: 10_000, codesTrained: true) == 40)
    }

    @Test("IVF auto probes 64 lists up to 250,000 vectors, then in proportion to the size; never more than there are")
    func autoProbesFollowTheSize() {
        let auto = LocalSink.IndexSettings()
        #expect(auto.nprobe == nil)
        #expect(auto.probes(lists: 628, vectors: 98_731) == 64)
        #expect(auto.probes(lists: 1_000, vectors: 250_000) == 64)
        #expect(auto.probes(lists: 1_000, vectors: 250_001) == 65)
        #expect(auto.probes(lists: 2_000, vectors: 1_000_000) == 256)
        #expect(auto.probes(lists: 1_762, vectors: 1_000_000) == 256)
        #expect(auto.probes(lists: 40, vectors: 1_000_000) == 40)
        var fixed = LocalSink.IndexSettings()
        fixed.nprobe = 32
        #expect(fixed.probes(lists: 2_000, vectors: 1_000_000) == 32)
        #expect(fixed.probes(lists: 10, vectors: 1_000_000) == 10)
    }

    @Test("the pipeline file says auto or a number; anything else is refused with the key's name")
    func settingIsAutoOrANumber() throws {
        #expect(try PipelineConfiguration.load(file: nil).sink.hnsw.efSearch == nil)
        #expect(
            try PipelineConfiguration.load(file: nil, overrides: ["sink.hnsw.ef_search=auto"]).sink.hnsw.efSearch == nil
        )
        #expect(
            try PipelineConfiguration.load(file: nil, overrides: ["sink.hnsw.ef_search=200"]).sink.hnsw.efSearch == 200
        )
        let error = #expect(throws: SluiceError.self) {
            try PipelineConfiguration.load(file: nil, overrides: ["sink.hnsw.ef_search=wide"])
        }
        #expect(error?.message.contains("sink.hnsw.ef_search") == true)
    }

    @Test("searches of different breadths at once each get their own: a breadth past the store's size is exact")
    func breadthIsPerSearch() async throws {
        let folder = LocalSinkANNTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // Vectors with no structure to speak of (a cluster each) and a narrow search: a breadth of 1 (the store
        // asks for k + max(k, 8) = 20 candidates) misses neighbours an exhaustive one finds. With 200 clusters of
        // 15 it sometimes found all 40 queries' best 10 in both narrow searches (session 37: the graph in memory is
        // built by two threads, in an order that differs run to run).
        var generator = ClusteredVectors(dimensions: 64, clusters: 3000, spread: 1.0, seed: 0xB4EA)
        var section = PipelineConfiguration.Sink()
        section.hnsw.exactBelow = 0
        let sink = try LocalSink(directory: folder, index: .init(section: section))
        try await LocalSinkANNTests.prepare(sink, dimensions: 64)
        try await sink.upsert(LocalSinkANNTests.records(generator.next(3000)))
        let queries = generator.next(40)
        let truth = try queries.map { try sink.exactSearch($0, k: 10).map(\.record.id) }
        try await withThrowingTaskGroup(of: (wide: Bool, exactAnswers: Int).self) { group in
            for wide in [true, false, true, false] {
                group.addTask {
                    var exactAnswers = 0
                    for (query, expected) in zip(queries, truth) {
                        let hits = try sink.searchGraph(query, k: 10, breadth: wide ? 5000 : 1) ?? []
                        if hits.map(\.record.id) == expected { exactAnswers += 1 }
                    }
                    return (wide, exactAnswers)
                }
            }
            var narrowMissed = false
            for try await (wide, exactAnswers) in group {
                if wide {
                    #expect(exactAnswers == queries.count, "an exhaustive search answers as the scan does")
                } else if exactAnswers < queries.count {
                    narrowMissed = true
                }
            }
            #expect(narrowMissed, "a breadth of 1 misses some of the best 10: the breadth reached the graph")
        }
    }
}
