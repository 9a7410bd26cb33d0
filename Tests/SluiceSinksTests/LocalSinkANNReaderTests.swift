import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// A reader holding a graph while a writer moves the store on (`LocalSink+ANNReader.swift`): it answers
/// from its graph and the change log, never with a deleted or stale record, brings its graph up to date,
/// and falls back to a saved graph or the scan when the log has a gap. Behaviour only, never timing.
@Suite struct LocalSinkANNReaderTests {
    typealias T = LocalSinkANNTests

    /// The reader's answer is the scan's: a candidate list longer than the store makes the graph's search
    /// visit every node, so any difference is the graph or the log being wrong, not the approximation.
    static func expectExact(_ reader: LocalSink, _ queries: [[Float]], _ moment: String) async throws {
        for query in queries {
            let found = try await reader.search(query, k: 10)
            let exact = try reader.exactSearch(query, k: 10)
            #expect(found.map(\.score) == exact.map(\.score), "\(moment)")
            #expect(Set(found.map(\.record.id)) == Set(exact.map(\.record.id)), "\(moment)")
            for hit in found {
                let stored = exact.first { $0.record.id == hit.record.id }
                #expect(stored?.record.vector == hit.record.vector, "\(moment): a stale record")
            }
        }
    }

    /// A store of `count` vectors from `generator` (its graph saved, as after a run), a read-only reader that
    /// has loaded that graph (as `sluice serve` after its first search), and a writer ready to move the store on.
    static func readerAndWriter(
        _ folder: URL,
        count: Int,
        _ generator: inout ClusteredVectors
    ) async throws -> (reader: LocalSink, writer: LocalSink, seeded: [VectorRecord]) {
        let seeded = T.records(generator.next(count))
        try await T.seed(folder, seeded)
        let reader = try T.open(folder, readOnly: true)
        _ = try await reader.search(generator.next(), k: 3)
        let writer = try T.open(folder)
        try await T.prepare(writer)
        return (reader, writer, seeded)
    }

    @Test("a reader with an older graph answers from it and the change log: new, replaced, deleted and re-used labels")
    func followsTheWriter() async throws {
        let folder = T.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: T.dimensions, clusters: 10, seed: 0xF011)
        let (reader, writer, first) = try await Self.readerAndWriter(folder, count: 600, &generator)
        let loaded = try #require(reader.annState.live?.generation)
        reader.setSearchBreadth(5000)

        let added = T.records(generator.next(200), from: 600)
        try await writer.upsert(added)
        let deleted = Array(first[0..<150])
        try await writer.delete(deleted.map(\.id))
        // Existing ids with new vectors (their labels are kept), and new ids taking the freed labels.
        let moved = first[300..<350].map {
            VectorRecord(
                id: $0.id,
                documentKey: $0.documentKey,
                ordinal: $0.ordinal,
                text: "moved",
                vector: generator.uniform(),
                metadata: [:]
            )
        }
        try await writer.upsert(moved)
        try await writer.upsert(T.records(generator.next(100), from: 800))

        let queries =
            generator.next(10) + deleted.prefix(10).map(\.vector) + moved.prefix(10).map(\.vector)
            + first[300..<310].map(\.vector) + added.prefix(5).map(\.vector)
        try await Self.expectExact(reader, queries, "behind the writer")
        #expect(reader.annState.live?.generation == loaded, "the graph was not reloaded or caught up")
        #expect(try reader.searchGraph(queries[0], k: 10, breadth: 64) != nil, "answered from the graph")
        for record in deleted.prefix(20) {
            let hits = try await reader.search(record.vector, k: 10)
            #expect(!hits.contains { Set(deleted.map(\.id)).contains($0.record.id) })
        }

        // Brought up to date, as the writer keeps its own.
        reader.catchUpIndex()
        writer.settleIndex()  // the follower has applied the writes
        #expect(reader.annState.live?.generation == writer.annState.live?.generation)
        #expect(reader.annState.live?.index?.elementCount == writer.annState.live?.index?.elementCount)
        #expect(reader.annState.live?.index?.deletedCount == writer.annState.live?.index?.deletedCount)
        try await Self.expectExact(reader, queries, "caught up")
    }

    @Test("the changed labels a reader keeps for its graph are read anew when the store's generation moves")
    func changedLabelsFollowTheStoresGeneration() async throws {
        let folder = T.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: T.dimensions, clusters: 10, seed: 0xCAC4E)
        let (reader, writer, _) = try await Self.readerAndWriter(folder, count: 400, &generator)
        let loaded = try #require(reader.annState.live?.generation)
        reader.setSearchBreadth(5000)
        let first = T.records(generator.next(20), from: 400)
        try await writer.upsert(first)
        // Several searches at the same pair of generations (the labels are kept after the first).
        try await Self.expectExact(reader, first.map(\.vector), "after the first write")
        // The store moves on: records the reader's graph has never seen, with labels the kept set lacks.
        let second = T.records(generator.next(20), from: 420)
        try await writer.upsert(second)
        try await writer.delete(first.prefix(5).map(\.id))
        try await Self.expectExact(reader, second.map(\.vector) + first.map(\.vector), "after the second write")
        for record in second {
            #expect(try await reader.search(record.vector, k: 1).first?.record.id == record.id)
        }
        for record in first.prefix(5) {
            let hits = try await reader.search(record.vector, k: 10)
            #expect(!hits.contains { $0.record.id == record.id }, "a deleted record")
        }
        #expect(reader.annState.live?.generation == loaded, "answered from the same graph and the log")
    }

    @Test("past the bound of changed labels, a search starts bringing the reader's graph up to date")
    func catchesUpPastTheBound() async throws {
        let folder = T.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: T.dimensions, clusters: 10, seed: 0xB0D)
        let (reader, writer, _) = try await Self.readerAndWriter(folder, count: 300, &generator)
        try await writer.upsert(T.records(generator.next(LocalANNChangeLog.catchUpAfter + 100), from: 300))
        writer.settleIndex()  // the follower has applied the writes
        let target = try #require(writer.annState.live?.generation)
        _ = try await reader.search(generator.next(), k: 10)
        // The catch-up runs in the background; searches go on meanwhile.
        let deadline = ContinuousClock.now + .seconds(120)
        while reader.annState.live?.generation != target, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(reader.annState.live?.generation == target)
        #expect(reader.annState.live?.index?.elementCount == LocalANNChangeLog.catchUpAfter + 400)
        reader.setSearchBreadth(5000)
        try await Self.expectExact(reader, generator.next(10), "caught up in the background")
    }

    @Test(
        "a gap in the change log (a rebuild gives new labels): the reader never uses its graph, and loads the new one"
    )
    func gapAfterRebuild() async throws {
        let folder = T.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: T.dimensions, clusters: 10, seed: 0x6A9)
        let (reader, writer, _) = try await Self.readerAndWriter(folder, count: 400, &generator)
        let loaded = try #require(reader.annState.live?.generation)
        try await writer.upsert(T.records(generator.next(50), from: 400))
        try writer.rebuildIndex()  // new labels for every id, saved at once
        let rebuilt = try #require(writer.annState.live?.generation)
        #expect(
            try reader.searchGraph(generator.next(), k: 10, breadth: 64) == nil,
            "the old graph cannot be used past the gap"
        )
        _ = try await reader.search(generator.next(), k: 1)
        reader.setSearchBreadth(5000)
        try await Self.expectExact(reader, generator.next(10), "after the rebuild")
        #expect(reader.annState.live?.generation == rebuilt, "the rebuilt graph was loaded (was \(loaded))")
    }

    @Test("a new reader loads the newest saved graph the change log covers (a writer killed before its save)")
    func loadsAnOlderGraphTheLogCovers() async throws {
        let folder = T.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: T.dimensions, clusters: 10, seed: 0x01D)
        let first = T.records(generator.next(500))
        try await T.seed(folder, first)
        let saved = try T.indexFiles(folder)
        do {
            let writer = try T.open(folder)
            try await T.prepare(writer)
            try await writer.upsert(T.records(generator.next(100), from: 500))
            try await writer.delete(first.prefix(80).map(\.id))
            // Never finished: the process "dies" here.
        }
        #expect(try T.indexFiles(folder) == saved)
        let reader = try T.open(folder, readOnly: true)
        reader.setSearchBreadth(5000)
        _ = try await reader.search(generator.next(), k: 1)
        reader.setSearchBreadth(5000)
        try await Self.expectExact(reader, generator.next(10) + first.prefix(10).map(\.vector), "after the kill")
        #expect(reader.annState.live != nil, "the older graph is used with the change log")
        // The next writer brings it up to date instead of rebuilding it, and saves it.
        let writer = try T.open(folder)
        try await T.prepare(writer)
        #expect(writer.annState.live?.index?.elementCount == 600)
        #expect(writer.annState.live?.index?.deletedCount == 80)
        try await writer.finish()
        let files = try T.indexFiles(folder)
        #expect(files.count == 1 && files != saved, "\(files)")
    }
}
