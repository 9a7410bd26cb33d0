import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// The local store's HNSW index: recall against the exact scan on clustered vectors, deletes, re-used
/// slots, the saved file, and what happens when the saved file does not match the data (a crash between
/// a write and the next save, a damaged file). Behaviour only, never timing.
@Suite struct LocalSinkANNTests {
    static let dimensions = 48

    static func records(_ vectors: [[Float]], from start: Int = 0) -> [VectorRecord] {
        vectors.enumerated().map { offset, vector in
            let n = start + offset
            return VectorRecord(
                id: VectorID(rawValue: String(format: "v%06d", n)),
                documentKey: "doc-\(n / 10).txt",
                ordinal: n % 10,
                text: "text \(n)",
                vector: vector,
                metadata: [:]
            )
        }
    }

    static func folder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("local-ann-\(UInt64.random(in: 0...UInt64.max))")
    }

    /// Both kinds of graph: hnswlib's in memory, and ours with its nodes in a file (`sink.hnsw.nodes`).
    static let nodeKinds = PipelineConfiguration.Sink.HNSW.Nodes.allCases

    static func open(
        _ folder: URL,
        readOnly: Bool = false,
        kind: PipelineConfiguration.Sink.LocalIndex = .hnsw,
        nodes: PipelineConfiguration.Sink.HNSW.Nodes = .memory
    )
        throws -> LocalSink
    {
        var section = PipelineConfiguration.Sink()
        section.localIndex = kind
        section.hnsw.nodes = nodes
        section.hnsw.exactBelow = 0  // the graph answers even these small stores
        return try LocalSink(directory: folder, readOnly: readOnly, index: .init(section: section))
    }

    static func prepare(_ sink: LocalSink, dimensions: Int = dimensions) async throws {
        try await sink.prepare(embedder: EmbedderIdentity(provider: "t", model: "m", dimensions: dimensions))
    }

    /// The saved graphs (and their temporary files) of either kind.
    static func indexFiles(_ folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasPrefix("hnsw-") || $0.hasPrefix("graph-") }.sorted()
    }

    /// A store holding `records`, its graph saved (a run that ended), closed again.
    static func seed(
        _ folder: URL,
        _ records: [VectorRecord],
        nodes: PipelineConfiguration.Sink.HNSW.Nodes = .memory
    ) async throws {
        let sink = try open(folder, nodes: nodes)
        try await prepare(sink)
        try await sink.upsert(records)
        try await sink.finish()
    }

    /// Mean share of the exact scan's top 10 that the store's search returns.
    static func recall(_ sink: LocalSink, queries: [[Float]]) async throws -> Double {
        var total = 0.0
        for query in queries {
            let exact = Set(try sink.exactSearch(query, k: 10).map(\.record.id))
            let found = Set(try await sink.search(query, k: 10).map(\.record.id))
            total += Double(exact.intersection(found).count) / Double(max(1, exact.count))
        }
        return total / Double(queries.count)
    }

    @Test(
        "recall@10 of the HNSW search against the exact scan is at least 0.95 on clustered vectors",
        arguments: nodeKinds
    )
    func recallOnClusteredVectors(nodes: PipelineConfiguration.Sink.HNSW.Nodes) async throws {
        let folder = Self.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 40, spread: 1.0, seed: 0xA11)
        let sink = try Self.open(folder, nodes: nodes)
        try await Self.prepare(sink)
        for batch in stride(from: 0, to: 4000, by: 500) {
            try await sink.upsert(Self.records(generator.next(500), from: batch))
        }
        sink.settleIndex()  // the follower has applied the writes
        #expect(sink.annState.live?.index?.elementCount == 4000)
        let recall = try await Self.recall(sink, queries: generator.next(100))
        #expect(recall >= 0.95, "recall@10 \(recall)")
        // Scores are the exact cosine, as the scan's.
        let query = generator.next()
        let hits = try await sink.search(query, k: 5)
        for hit in hits {
            let cosine = zip(hit.record.vector, query).reduce(Float(0)) { $0 + $1.0 * $1.1 }
            #expect(abs(hit.score - cosine) < 1e-4)
        }
    }

    @Test(
        "below sink.hnsw.exact_below vectors, searches scan (exact) and no graph is built; a write at twice that size builds it",
        arguments: nodeKinds
    )
    func smallStoresScan(nodes: PipelineConfiguration.Sink.HNSW.Nodes) async throws {
        let folder = Self.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 3, seed: 0x5CA)
        var section = PipelineConfiguration.Sink()
        section.hnsw.exactBelow = 200
        section.hnsw.nodes = nodes
        let sink = try LocalSink(directory: folder, index: .init(section: section))
        try await Self.prepare(sink)
        // 150, then 100 more: each write found the store below 200 vectors, so no graph.
        try await sink.upsert(Self.records(generator.next(150)))
        try await sink.upsert(Self.records(generator.next(100), from: 150))
        sink.settleIndex()
        #expect(sink.annState.live == nil, "no graph below exact_below")
        for query in generator.next(10) {
            let hits = try await sink.search(query, k: 10)
            #expect(hits.map(\.record.id) == (try sink.exactSearch(query, k: 10)).map(\.record.id))
        }
        try await sink.finish()
        #expect(try Self.indexFiles(folder).isEmpty, "nothing saved without a graph")

        // A write that finds 250 vectors (past 200, below twice that) builds nothing either; the one that finds
        // 400 builds the graph from every stored vector, and it follows on.
        try await sink.upsert(Self.records(generator.next(150), from: 250))
        sink.settleIndex()
        #expect(sink.annState.live == nil, "no graph below twice exact_below")
        try await sink.upsert(Self.records(generator.next(10), from: 400))
        sink.settleIndex()
        #expect(sink.annState.live?.index?.elementCount == 410)
        try await sink.finish()
        #expect(try Self.indexFiles(folder).count == 1)

        // Deletes that bring the store below the size again keep the graph following (no rebuild later).
        let reopened = try LocalSink(directory: folder, index: .init(section: section))
        try await Self.prepare(reopened)
        try await reopened.delete(
            Self.records(Array(repeating: [Float](repeating: 0, count: Self.dimensions), count: 250)).map(\.id)
        )
        reopened.settleIndex()
        #expect(reopened.annState.live?.index?.deletedCount == 250)
    }

    @Test("deleted vectors are never returned, and new ones re-use their graph slots", arguments: nodeKinds)
    func deletesAndReusedSlots(nodes: PipelineConfiguration.Sink.HNSW.Nodes) async throws {
        let folder = Self.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 10, seed: 0xDE1)
        let sink = try Self.open(folder, nodes: nodes)
        try await Self.prepare(sink)
        let vectors = generator.next(600)
        let records = Self.records(vectors)
        try await sink.upsert(records)
        let deleted = Array(records[0..<200])
        try await sink.delete(deleted.map(\.id))
        for record in deleted.prefix(50) {
            let hits = try await sink.search(record.vector, k: 10)
            #expect(!hits.contains { deleted.map(\.id).contains($0.record.id) })
            #expect(hits.count == 10)
        }
        sink.settleIndex()  // the follower has applied the writes
        #expect(sink.annState.live?.index?.deletedCount == 200)
        // 200 new ids take the 200 freed slots: the graph does not grow.
        try await sink.upsert(Self.records(generator.next(200), from: 600))
        sink.settleIndex()  // the follower has applied the writes
        #expect(sink.annState.live?.index?.elementCount == 600)
        #expect(sink.annState.live?.index?.deletedCount == 0)
        // An id upserted again keeps its label: its new vector replaces the old one.
        let moved = VectorRecord(
            id: records[300].id,
            documentKey: "moved.txt",
            ordinal: 0,
            text: "moved",
            vector: generator.uniform(),
            metadata: [:]
        )
        try await sink.upsert([moved])
        sink.settleIndex()  // the follower has applied the writes
        #expect(sink.annState.live?.index?.elementCount == 600)
        #expect(try await sink.search(moved.vector, k: 1).first?.record.id == moved.id)
        #expect(try await sink.count() == 600)
        let recall = try await Self.recall(sink, queries: generator.next(50))
        #expect(recall >= 0.95, "recall@10 \(recall)")
    }

    @Test("finish() saves the graph; a new process loads it instead of rebuilding", arguments: nodeKinds)
    func savedAndLoaded(nodes: PipelineConfiguration.Sink.HNSW.Nodes) async throws {
        let folder = Self.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 10, seed: 0x5A7)
        do {
            let sink = try Self.open(folder, nodes: nodes)
            try await Self.prepare(sink)
            let records = Self.records(generator.next(900))
            try await sink.upsert(records)
            try await sink.delete(records.suffix(100).map(\.id))  // saved with deleted slots
            try await sink.finish()
        }
        let files = try Self.indexFiles(folder)
        #expect(files.count == 1 && files[0].hasSuffix(nodes == .memory ? ".index" : ".nodes"), "\(files)")
        do {
            let reader = try Self.open(folder, readOnly: true, nodes: nodes)
            #expect(reader.annState.live == nil)
            let query = generator.next()
            let hits = try await reader.search(query, k: 10)
            #expect(reader.annState.live?.index?.elementCount == 900, "the saved graph was loaded")
            #expect(reader.annState.live?.index?.deletedCount == 100)
            #expect(Set(hits.map(\.record.id)) == Set(try reader.exactSearch(query, k: 10).map(\.record.id)))
        }
        // A writer opening it loads it too: no rebuild, so no new file.
        let writer = try Self.open(folder, nodes: nodes)
        try await Self.prepare(writer)
        try await writer.finish()
        #expect(try Self.indexFiles(folder) == files)
    }

    @Test(
        "a reader that searched before the writer saved its graph uses the graph once it is saved",
        arguments: nodeKinds
    )
    func readerTakesGraphSavedAfterItSearched(nodes: PipelineConfiguration.Sink.HNSW.Nodes) async throws {
        let folder = Self.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 10, seed: 0x5AF)
        // A first run: the store holds vectors, no graph is saved yet.
        let writer = try Self.open(folder, nodes: nodes)
        try await Self.prepare(writer)
        try await writer.upsert(Self.records(generator.next(500)))
        let reader = try Self.open(folder, readOnly: true, nodes: nodes)
        let query = generator.next()
        let scanned = try await reader.search(query, k: 10)
        #expect(scanned.map(\.record.id) == (try reader.exactSearch(query, k: 10)).map(\.record.id))
        #expect(reader.annState.live == nil, "nothing saved to load yet")
        // The run ends: its graph is saved under the generation the reader already searched at.
        try await writer.finish()
        let generation = try #require(writer.annState.live?.generation)
        let hits = try await reader.search(query, k: 10)
        #expect(reader.annState.live?.generation == generation, "the saved graph is loaded")
        #expect(reader.annState.live?.index?.elementCount == 500)
        #expect(Set(hits.map(\.record.id)) == Set(scanned.map(\.record.id)))
    }

    @Test(
        "writes after the last save (a crash before finish): searches use the saved graph and the change log, the next writer brings it up to date",
        arguments: nodeKinds
    )
    func staleSavedGraph(nodes: PipelineConfiguration.Sink.HNSW.Nodes) async throws {
        let folder = Self.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 10, seed: 0xC4A)
        let first = Self.records(generator.next(500))
        let later = Self.records(generator.next(300), from: 500)
        do {
            let sink = try Self.open(folder, nodes: nodes)
            try await Self.prepare(sink)
            try await sink.upsert(first)
            try await sink.finish()
            // Committed to LMDB, never saved: the process "dies" here.
            try await sink.upsert(later)
            try await sink.delete(first.prefix(100).map(\.id))
        }
        do {
            let reader = try Self.open(folder, readOnly: true, nodes: nodes)
            for record in later.prefix(20) {
                let hits = try await reader.search(record.vector, k: 10)
                #expect(hits.first?.record.id == record.id)
                #expect(hits.map(\.record.id) == (try reader.exactSearch(record.vector, k: 10)).map(\.record.id))
            }
            #expect(reader.annState.live?.index?.elementCount == 500, "the older graph, with the change log")
        }
        let saved = try Self.indexFiles(folder)
        let writer = try Self.open(folder, nodes: nodes)
        try await Self.prepare(writer)
        #expect(writer.annState.live?.index?.elementCount == 800, "brought up to date, not rebuilt")
        #expect(writer.annState.live?.index?.deletedCount == 100)
        #expect(try await Self.recall(writer, queries: generator.next(50)) >= 0.95)
        try await writer.finish()
        let files = try Self.indexFiles(folder)
        #expect(files.count == 1 && files != saved, "the graph is saved, the stale one removed: \(files)")
    }

    @Test("a damaged saved graph of the right generation is rebuilt", arguments: nodeKinds)
    func damagedFile(nodes: PipelineConfiguration.Sink.HNSW.Nodes) async throws {
        let folder = Self.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 10, seed: 0xBAD)
        try await Self.seed(folder, Self.records(generator.next(400)), nodes: nodes)
        let file = folder.appendingPathComponent(try Self.indexFiles(folder)[0])
        let bytes = try Data(contentsOf: file)
        try bytes.prefix(bytes.count / 2).write(to: file)
        do {
            let reader = try Self.open(folder, readOnly: true, nodes: nodes)
            let query = generator.next()
            #expect(
                try await reader.search(query, k: 10).map(\.record.id)
                    == (try reader.exactSearch(query, k: 10)).map(\.record.id)
            )
        }
        let writer = try Self.open(folder, nodes: nodes)
        try await Self.prepare(writer)  // starts the build from a snapshot, beside the writes
        writer.settleIndex()
        #expect(writer.annState.live?.index?.elementCount == 400)
        #expect(try await Self.recall(writer, queries: generator.next(30)) >= 0.95)
    }

    @Test(
        "exact: no graph is kept, and a later switch to hnsw rebuilds one (the old file is stale)",
        arguments: nodeKinds
    )
    func exactThenHNSW(nodes: PipelineConfiguration.Sink.HNSW.Nodes) async throws {
        let folder = Self.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 10, seed: 0xE4A)
        try await Self.seed(folder, Self.records(generator.next(300)), nodes: nodes)
        let saved = try Self.indexFiles(folder)
        do {
            let sink = try Self.open(folder, kind: .exact, nodes: nodes)
            try await Self.prepare(sink)
            try await sink.upsert(Self.records(generator.next(100), from: 300))
            #expect(sink.annState.live == nil)
            try await sink.finish()
            #expect(try Self.indexFiles(folder).isEmpty, "exact removes the saved graph")
        }
        // The graph saved before the exact run must not come back, even if the file were still there.
        try Data().write(to: folder.appendingPathComponent(saved[0]))
        let sink = try Self.open(folder, nodes: nodes)
        try await Self.prepare(sink)  // relabels (written with exact), then builds beside the writes
        sink.settleIndex()
        #expect(sink.annState.live?.index?.elementCount == 400)
        // Emptying the store empties the graph.
        try await sink.removeAll()
        try await Self.prepare(sink)
        #expect(try await sink.search(generator.next(), k: 3).isEmpty)
        try await sink.upsert(Self.records(generator.next(5), from: 1000))
        #expect(try await sink.search(generator.next(), k: 3).count == 3)
    }
    @Test(
        "a graph saved by the other kind (sink.hnsw.nodes) is not loaded: a reader scans, the writer builds its own and removes the other's file",
        arguments: nodeKinds
    )
    func otherKindIsRebuilt(nodes: PipelineConfiguration.Sink.HNSW.Nodes) async throws {
        let folder = Self.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 10, seed: 0x07E4)
        let other: PipelineConfiguration.Sink.HNSW.Nodes = nodes == .memory ? .file : .memory
        try await Self.seed(folder, Self.records(generator.next(400)), nodes: other)
        let saved = try Self.indexFiles(folder)
        #expect(saved.count == 1)
        do {
            let reader = try Self.open(folder, readOnly: true, nodes: nodes)
            let query = generator.next()
            let hits = try await reader.search(query, k: 10)
            #expect(hits.map(\.record.id) == (try reader.exactSearch(query, k: 10)).map(\.record.id))
            #expect(reader.annState.live == nil, "the other kind's file is not loaded: searches scan")
        }
        let writer = try Self.open(folder, nodes: nodes)
        try await Self.prepare(writer)  // builds from a snapshot
        writer.settleIndex()
        #expect(writer.annState.live?.index?.nodes == nodes)
        #expect(writer.annState.live?.index?.elementCount == 400)
        try await writer.finish()
        let files = try Self.indexFiles(folder)
        #expect(files.count == 1 && files != saved, "its own file saved, the other's removed: \(files)")
        #expect(try await Self.recall(writer, queries: generator.next(30)) >= 0.95)
    }
}
