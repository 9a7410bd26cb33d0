import Foundation
import SluiceCore
import SluiceTesting
import Synchronization
import Testing

@testable import SluiceSinks

/// A filtered vector search on the local store reads records in the order of the graph's bounds
/// (`LocalSink+FilteredSearch.swift`): its answer must be the exact scan's — the same records, scores and order,
/// ties included — for filters of every selectivity, after writes the graph has not seen, and when the graph
/// cannot answer (its nodes in a file) it scans. Behaviour only, never timing: what is counted is how each search
/// was answered and how many records it read.
@Suite struct LocalSinkFilteredSearchTests {
    static let dimensions = 32

    /// `count` records from `start`, with metadata of several selectivities; every 97th record shares one vector
    /// with the others of its kind, so scores tie.
    static func records(_ generator: inout ClusteredVectors, count: Int, from start: Int = 0) -> [VectorRecord] {
        let shared = generator.next()
        return (start..<start + count).map { n in
            VectorRecord(
                id: VectorID(rawValue: String(format: "v%06d", n)),
                documentKey: "doc-\(n / 10).txt",
                ordinal: n % 10,
                text: "text \(n)",
                vector: n % 97 == 0 ? shared : generator.next(),
                metadata: [
                    "half": n % 2 == 0 ? "even" : "odd",
                    "tenth": n % 10 == 3 ? "yes" : "no",
                    "rare": n % 150 == 11 ? "yes" : "no",
                    "page": .int(n),
                ]
            )
        }
    }

    static let filters = [
        "half = even", "tenth = yes", "rare = yes", "page >= 2500", "half = odd and page < 400", "tenth = never",
    ]

    static func folder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("filtered-\(UUID().uuidString)")
    }

    static func open(_ folder: URL, nodes: PipelineConfiguration.Sink.HNSW.Nodes) async throws -> LocalSink {
        var section = PipelineConfiguration.Sink()
        section.hnsw.nodes = nodes
        section.hnsw.exactBelow = 0  // the graph answers this small store
        let sink = try LocalSink(directory: folder, index: .init(section: section))
        try await sink.prepare(embedder: EmbedderIdentity(provider: "t", model: "m", dimensions: dimensions))
        return sink
    }

    /// How a filter's searches were answered: by the bounds (with the records they read) or by a scan.
    struct Answered {
        var bounded = 0
        var scanned = 0
        var read = 0
    }

    /// Every filter at several k for each query: the store's answer is the scan's, hit for hit. Returns how each
    /// filter's searches were answered.
    @discardableResult
    static func expectScanAnswers(
        _ sink: LocalSink,
        queries: [[Float]],
        _ context: String
    ) async throws
        -> [String: Answered]
    {
        var answered: [String: Answered] = [:]
        for query in queries {
            for text in filters {
                let filter = try SearchFilter(parsing: text)
                for k in [1, 7, 40] {
                    let before = sink.filteredSearchCounts.withLock { $0 }
                    let found = try await sink.search(SearchRequest(vector: query, k: k, filter: filter))
                    let after = sink.filteredSearchCounts.withLock { $0 }
                    answered[text, default: Answered()].bounded += after.bounded - before.bounded
                    answered[text, default: Answered()].scanned += after.scanned - before.scanned
                    answered[text, default: Answered()].read += after.recordsRead - before.recordsRead
                    let scanned = try LocalSink.exactSearch(environment: sink.environment, query, k: k, filter: filter)
                    #expect(
                        found.map(\.record.id) == scanned.map(\.record.id)
                            && found.map(\.score) == scanned.map(\.score),
                        "\(context): \(text), k \(k): \(found.map(\.record.id.rawValue)) against the scan's \(scanned.map(\.record.id.rawValue))"
                    )
                    #expect(found.allSatisfy { filter.matches($0.record) })
                }
            }
        }
        return answered
    }

    @Test(
        "the graph's bounds answer filtered searches exactly as the scan does — every selectivity, ties by id, and after replaces, deletes and new records the graph has not seen — reading a fraction of the store"
    )
    func boundsAnswerAsTheScan() async throws {
        let folder = Self.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 12, seed: 0xF117)
        let sink = try await Self.open(folder, nodes: .memory)
        for start in stride(from: 0, to: 3000, by: 500) {
            try await sink.upsert(Self.records(&generator, count: 500, from: start))
        }
        sink.settleIndex()
        #expect(sink.annState.live?.index?.elementCount == 3000)
        let queries = generator.next(12) + [Self.records(&generator, count: 1).first!.vector]
        let answered = try await Self.expectScanAnswers(sink, queries: queries, "after the load")
        let searches = queries.count * 3
        // A filter that half the records match: the bounds answer every search, reading a small part of the
        // store (the scan reads all 3,000 records).
        for text in ["half = even", "page >= 2500"] {
            let counts = try #require(answered[text])
            #expect(counts.bounded == searches && counts.scanned == 0, "\(text): \(counts)")
            #expect(counts.read < searches * 3000 / 4, "\(text): \(counts.read) records read in \(searches) searches")
        }
        // A filter nothing matches reads past the budget (2,048 records here) in the bounds' order: it scans.
        #expect(answered["tenth = never"]?.scanned == searches && answered["tenth = never"]?.bounded == 0)
        #expect(
            Self.filters.reduce(0) { $0 + (answered[$1]?.bounded ?? 0) + (answered[$1]?.scanned ?? 0) } == searches
                * Self.filters.count
        )

        // Writes the graph has not seen yet (no settle: the follower may or may not have applied them; what it has
        // not is read from the change log): replaced vectors, deleted records and new ones.
        var replaced = Self.records(&generator, count: 300, from: 1200)
        for index in replaced.indices { replaced[index].vector = generator.next() }
        try await sink.upsert(replaced)
        try await sink.delete((2000..<2100).map { VectorID(rawValue: String(format: "v%06d", $0)) })
        try await sink.upsert(Self.records(&generator, count: 200, from: 3000))
        // (A search whose bounds a write of the follower overlapped scans instead: how many depends on timing.)
        try await Self.expectScanAnswers(sink, queries: generator.next(6), "after writes")
        sink.settleIndex()
        let caughtUp = try await Self.expectScanAnswers(sink, queries: generator.next(4), "after the graph caught up")
        #expect(caughtUp["half = even"]?.bounded == 4 * 3 && caughtUp["half = even"]?.scanned == 0)
        try await sink.finish()
    }

    @Test(
        "with access control on, a filter restricting its field by top-level conditions uses the bounds (LocalSinkAccessSearchTests), one naming it inside an or scans; the pipeline's store knows the field"
    )
    func accessFieldFilters() async throws {
        let folder = Self.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 12, seed: 0xF119)
        var section = PipelineConfiguration.Sink()
        section.hnsw.exactBelow = 0
        var settings = LocalSink.IndexSettings(section: section)
        settings.accessField = "readers"
        let sink = try LocalSink(directory: folder, index: settings)
        try await sink.prepare(embedder: EmbedderIdentity(provider: "t", model: "m", dimensions: Self.dimensions))
        var records = Self.records(&generator, count: 1500)
        for index in records.indices {
            records[index].metadata["readers"] = .strings([index % 3 == 0 ? "alice" : "bob"])
        }
        try await sink.upsert(records)
        sink.settleIndex()
        let query = generator.next()
        for (text, bounded) in [
            ("readers in (alice)", true), ("half = even and readers in (bob)", true), ("half = even", true),
            ("readers in (alice) or half = even", false), ("(half = odd) and (readers = bob or page < 9)", false),
        ] {
            let filter = try SearchFilter(parsing: text)
            let before = sink.filteredSearchTally
            let found = try await sink.search(SearchRequest(vector: query, k: 10, filter: filter))
            let after = sink.filteredSearchTally
            #expect(
                found.map(\.record.id) == (try sink.scanSearch(query, k: 10, filter: filter)).map(\.record.id),
                "\(text)"
            )
            #expect(
                after.bounded - before.bounded == (bounded ? 1 : 0)
                    && after.scanned - before.scanned == (bounded ? 0 : 1),
                "\(text)"
            )
        }
        try await sink.finish()

        var configuration = PipelineConfiguration()
        configuration.sink.path = folder.path
        configuration.access.isEnabled = true
        configuration.access.field = "readers"
        let made = try #require(try SinkDescriptor.local.make(configuration, true) as? LocalSink)
        #expect(made.indexSettings.accessField == "readers")
        configuration.access.isEnabled = false
        let open = try #require(try SinkDescriptor.local.make(configuration, true) as? LocalSink)
        #expect(open.indexSettings.accessField == nil)
    }

    @Test(
        "filtered searches while writes replace vectors under them: every answer has k matching records, no id twice, exact scores in order, and after the writes the scan's answer"
    )
    func searchesDuringWrites() async throws {
        let folder = Self.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 12, seed: 0xF11A)
        let sink = try await Self.open(folder, nodes: .memory)
        let records = Self.records(&generator, count: 2000)
        try await sink.upsert(records)
        sink.settleIndex()
        // The writer replaces the vectors of 40 records at a time (their metadata kept, so what a filter matches
        // does not change) while the searches run: some overlap the follower's writes to the graph and scan.
        let replacements = (0..<30).map { round in
            (0..<40).map { offset in
                var record = records[(round * 67 + offset * 13) % records.count]
                record.vector = generator.next()
                return record
            }
        }
        let queries = generator.next(30)
        let filter = try SearchFilter(parsing: "half = even")
        let writer = Task {
            for batch in replacements { try await sink.upsert(batch) }
        }
        let norm = { (v: [Float]) in v.reduce(Float(0)) { $0 + $1 * $1 }.squareRoot() }
        for query in queries {
            let hits = try await sink.search(SearchRequest(vector: query, k: 10, filter: filter))
            #expect(hits.count == 10)
            #expect(Set(hits.map(\.record.id)).count == hits.count)
            #expect(hits.allSatisfy { filter.matches($0.record) })
            #expect(zip(hits, hits.dropFirst()).allSatisfy { $0.score >= $1.score })
            for hit in hits {
                let dot = zip(hit.record.vector, query).reduce(Float(0)) { $0 + $1.0 * $1.1 }
                #expect(abs(hit.score - dot / (norm(hit.record.vector) * norm(query))) < 1e-4)
            }
        }
        try await writer.value
        try await Self.expectScanAnswers(sink, queries: Array(queries.prefix(4)), "after the writes")
        try await sink.finish()
    }

    @Test(
        "a process whose first searches are filtered loads the saved graph for them, as an unfiltered search would"
    )
    func filteredSearchesLoadTheSavedGraph() async throws {
        let folder = Self.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 12, seed: 0xF11B)
        let writer = try await Self.open(folder, nodes: .memory)
        try await writer.upsert(Self.records(&generator, count: 1500))
        try await writer.finish()  // the graph saved, as at a run's end
        var section = PipelineConfiguration.Sink()
        section.hnsw.exactBelow = 0
        let reader = try LocalSink(directory: folder, readOnly: true, index: .init(section: section))
        #expect(reader.annState.live?.index == nil)
        let filter = try SearchFilter(parsing: "half = even")
        let query = generator.next()
        let found = try await reader.search(SearchRequest(vector: query, k: 10, filter: filter))
        #expect(found.map(\.record.id) == (try reader.scanSearch(query, k: 10, filter: filter)).map(\.record.id))
        #expect(reader.filteredSearchTally.bounded == 1 && reader.filteredSearchTally.scanned == 0)
        #expect(reader.annState.live?.index != nil)
    }

    @Test(
        "a graph with its nodes in a file holds no vectors to bound: its filtered searches scan, with the same answers"
    )
    func fileNodesScan() async throws {
        let folder = Self.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 12, seed: 0xF118)
        let sink = try await Self.open(folder, nodes: .file)
        try await sink.upsert(Self.records(&generator, count: 1500))
        sink.settleIndex()
        try await Self.expectScanAnswers(sink, queries: generator.next(3), "file nodes")
        let counts = sink.filteredSearchCounts.withLock { $0 }
        #expect(counts.bounded == 0 && counts.scanned == 3 * Self.filters.count * 3, "\(counts)")
        try await sink.finish()
    }
}
