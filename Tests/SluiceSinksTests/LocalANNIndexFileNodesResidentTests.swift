import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// The graph with its nodes in a file while it is small (session 35): every record is held in memory as well
/// as written to the file while they fit the resident budget (the store's: 8 MB), and the codes are trained
/// only when the graph outgrows it (or reaches codes_from). Held records change where a record is read from,
/// never what: a graph answers as the same graph holding none, after deletes, replaces, a save and a load.
/// And the store's `auto` breadth follows the graph: memory's until its codes are trained, 1.5 times it after.
/// Behaviour only, never timing.
@Suite struct LocalANNIndexFileNodesResidentTests {
    typealias Nodes = LocalANNIndexFileNodesTests

    /// A 48-d record: its count, 32 links, the 8-bit vector's scale and 48 values.
    static let recordBytes = 4 + 4 * 32 + 4 + 48

    @Test(
        "records held in memory change nothing the graph answers: deletes, replaces, the training, a save and a load answer as the same graph holding none, and the held records are counted in memory"
    )
    func heldRecordsAnswerAsTheFile() throws {
        let folder = try Nodes.folder()
        defer { TemporaryDirectory.remove(folder) }
        // The same training point either way (1,500 labels) and one insert thread (two insert side by side, in an
        // order that differs run to run: session 37), so the same graph.
        let held = Nodes.settings(codesFrom: 1500, residentBytes: LocalSink.IndexSettings.defaultFileResidentBytes)
        let none = Nodes.settings(codesFrom: 1500, residentBytes: 0)
        var generator = ClusteredVectors(dimensions: Nodes.dimensions, clusters: 20, seed: 0x4E51)
        let vectors = generator.next(1800)
        let heldIndex = try Nodes.filled(folder, vectors, settings: held, threads: 1)
        let noneIndex = try Nodes.filled(folder, vectors, settings: none, threads: 1)
        #expect(heldIndex.codeBytes == Nodes.codeBytes48, "trained at 1,500 labels")
        #expect(noneIndex.codeBytes == Nodes.codeBytes48)
        for label in stride(from: 0, to: 1800, by: 13) {
            #expect(try heldIndex.markDeleted(UInt64(label)))
            #expect(try noneIndex.markDeleted(UInt64(label)))
        }
        let replaced = [1, 13, 400, 1799].map { (UInt64($0), generator.next()) }
        try heldIndex.add(replaced, threads: 1)
        try noneIndex.add(replaced, threads: 1)

        let queries = generator.next(25) + replaced.map(\.1)
        let answers = { (graph: LocalANNIndex) in queries.map { graph.search($0, k: 10, breadth: 64).map(\.label) } }
        let expected = answers(noneIndex)
        #expect(answers(heldIndex) == expected, "held records answer otherwise than the file")
        // Trained and past session 34's first records: only the graph that fits its budget holds them.
        #expect(
            heldIndex.memoryBytes >= noneIndex.memoryBytes + 1800 * Self.recordBytes,
            "\(heldIndex.memoryBytes) bytes held against \(noneIndex.memoryBytes)"
        )

        // Saved by the graph holding its records, loaded with and without a budget: the file is whole.
        let file = folder.appendingPathComponent("graph-1.nodes")
        try heldIndex.save(to: file)
        let loadedHeld = try LocalANNIndex(loading: file, dimensions: Nodes.dimensions, settings: held)
        let loadedNone = try LocalANNIndex(loading: file, dimensions: Nodes.dimensions, settings: none)
        #expect(answers(loadedHeld) == expected)
        #expect(answers(loadedNone) == expected)
        #expect(
            loadedHeld.memoryBytes >= loadedNone.memoryBytes + 1800 * Self.recordBytes,
            "a loaded graph reads its records once"
        )

        // Writes after the load go to both (the loaded graph's working copy): still the same answers.
        let more = generator.next(200).enumerated().map { (UInt64(1800 + $0.offset), $0.element) }
        try loadedHeld.add(more, threads: 1)
        try noneIndex.add(more, threads: 1)
        #expect(try loadedHeld.markDeleted(1801))
        #expect(try noneIndex.markDeleted(1801))
        #expect(answers(loadedHeld) == answers(noneIndex))
    }

    @Test(
        "a graph whose records outgrow its budget trains its codes then, before codes_from, and lets its records go; until then it scores every node exactly"
    )
    func outgrowingTheBudgetTrainsTheCodes() throws {
        let folder = try Nodes.folder()
        defer { TemporaryDirectory.remove(folder) }
        // Room for 4,500 records (at least 4,096 are always held before the training): the codes come at 4,500
        // labels, long before codes_from.
        let settings = Nodes.settings(codesFrom: 16_384, residentBytes: 4500 * Self.recordBytes)
        var generator = ClusteredVectors(dimensions: Nodes.dimensions, clusters: 40, seed: 0xB0D6)
        let vectors = generator.next(4000)
        let index = try Nodes.filled(folder, vectors, settings: settings)
        #expect(index.codeBytes == 0, "4,000 records fit: no codes")
        #expect(index.memoryBytes >= 4000 * Self.recordBytes, "\(index.memoryBytes) bytes: the records are held")
        // Untrained, `auto` is memory's breadth, and recall is the graph in memory's.
        let breadth = settings.searchBreadth(vectors: 4000, codesTrained: index.codeBytes > 0)
        #expect(breadth == 64)
        let queries = generator.next(50)
        var total = 0.0
        for query in queries {
            let exact = Set(Nodes.exact(query, vectors, k: 10))
            let found = Set(index.search(query, k: 20, breadth: breadth).prefix(10).map(\.label))
            total += Double(exact.intersection(found).count) / 10
        }
        #expect(total / Double(queries.count) >= 0.95, "recall@10 \(total / Double(queries.count))")

        let more = generator.next(800)
        try index.add(more.enumerated().map { (UInt64(4000 + $0.offset), $0.element) }, threads: 1)
        #expect(index.codeBytes == Nodes.codeBytes48, "4,800 records do not fit: the codes are trained")
        #expect(index.memoryBytes < 4800 * Self.recordBytes / 2, "\(index.memoryBytes) bytes: the records let go")
        // Read from the file from now on: what the graph wrote while it held them reached it.
        let all = vectors + more
        let trainedBreadth = settings.searchBreadth(vectors: all.count, codesTrained: true)
        #expect(trainedBreadth == 96)
        total = 0
        for query in queries {
            let exact = Set(Nodes.exact(query, all, k: 10))
            let found = Set(index.search(query, k: 20, breadth: trainedBreadth).prefix(10).map(\.label))
            total += Double(exact.intersection(found).count) / 10
        }
        #expect(total / Double(queries.count) >= 0.95, "recall@10 \(total / Double(queries.count)) trained")
    }

    @Test(
        "through the store, auto searches a file graph at memory's breadth until its codes are trained, then at 1.5 times it, with recall kept, and sluice status says which"
    )
    func storeBreadthFollowsTheCodes() async throws {
        for codesFrom in [LocalSink.IndexSettings.defaultFileCodesFrom, 500] {
            let folder = LocalSinkANNTests.folder()
            defer { TemporaryDirectory.remove(folder) }
            var section = PipelineConfiguration.Sink()
            section.hnsw.nodes = .file
            section.hnsw.exactBelow = 0
            var settings = LocalSink.IndexSettings(section: section)
            settings.fileCodesFrom = codesFrom
            let sink = try LocalSink(directory: folder, index: settings)
            try await LocalSinkANNTests.prepare(sink)
            var generator = ClusteredVectors(
                dimensions: LocalSinkANNTests.dimensions,
                clusters: 40,
                spread: 1.0,
                seed: 0xA12
            )
            for batch in stride(from: 0, to: 2000, by: 500) {
                try await sink.upsert(LocalSinkANNTests.records(generator.next(500), from: batch))
            }
            sink.settleIndex()
            let trained = (sink.annState.live?.index?.codeBytes ?? 0) > 0
            #expect(trained == (codesFrom == 500), "codes trained at \(codesFrom)")
            #expect(sink.autoSearchBreadth(vectors: 2000) == (trained ? 96 : 64))
            let recall = try await LocalSinkANNTests.recall(sink, queries: generator.next(50))
            #expect(recall >= 0.95, "recall@10 \(recall) with codes from \(codesFrom)")
            // `sluice status` says it: from the graph in memory, and from the saved graph's header.
            let breadth = trained ? "96" : "64"
            #expect(try await sink.info().details["hnsw_ef_search"] == breadth)
            try await sink.finish()
            let status = try LocalSink(directory: folder, readOnly: true, index: settings)
            let details = try await status.info().details
            #expect(details["hnsw_graph"] == "built", "\(details)")
            #expect(details["hnsw_ef_search"] == breadth, "\(details)")
        }
    }
}
