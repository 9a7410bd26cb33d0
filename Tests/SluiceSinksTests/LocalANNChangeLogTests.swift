import Foundation
import SluiceCore
import SluiceLMDB
import SluiceTesting
import Testing

@testable import SluiceSinks

/// The change log's entries: what a write transaction records, what a reader can read back, where the
/// log has a gap, and what a trim keeps.
@Suite struct LocalANNChangeLogTests {
    typealias T = LocalSinkANNTests

    @Test(
        "below exact_below, where no graph is saved, a run's end still trims the log the writes keep",
        arguments: LocalSinkANNTests.nodeKinds
    )
    func trimmedWithoutAGraph(nodes: PipelineConfiguration.Sink.HNSW.Nodes) async throws {
        let folder = T.folder()
        defer { TemporaryDirectory.remove(folder) }
        var section = PipelineConfiguration.Sink()
        section.hnsw.nodes = nodes
        section.hnsw.exactBelow = 100_000  // never reached: no graph, searches scan
        var generator = ClusteredVectors(dimensions: 8, clusters: 4, seed: 0xC7)
        let records = T.records(generator.next(600))
        // Runs that rewrite the same 600 records: each write labels and logs them (the store keeps its labels
        // so that a graph can be built without relabelling once it grows).
        for _ in 0..<20 {
            let sink = try LocalSink(directory: folder, index: .init(section: section))
            try await T.prepare(sink, dimensions: 8)
            for start in stride(from: 0, to: records.count, by: 200) {
                try await sink.upsert(Array(records[start..<start + 200]))
            }
            try await sink.finish()
        }
        let sink = try LocalSink(directory: folder, readOnly: true, index: .init(section: section))
        let ann = try sink.environment.database("ann")
        var logged = 0
        try sink.environment.read { (txn: LMDBTransaction) throws in
            try txn.forEach(ann, from: LocalANNChangeLog.prefix) { key, value in
                guard key.starts(with: LocalANNChangeLog.prefix) else { return false }
                logged += value.count / 8
                return true
            }
        }
        #expect(sink.annState.live == nil, "no graph was built")
        #expect(logged > 0 && logged <= LocalANNChangeLog.retainedLabels, "\(logged) labels logged after 12,000 writes")
    }

    @Test(
        "each write records the labels it touched; a rebuild leaves a gap the log cannot bridge",
        arguments: LocalSinkANNTests.nodeKinds
    )
    func entriesAndGaps(nodes: PipelineConfiguration.Sink.HNSW.Nodes) async throws {
        let folder = T.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: T.dimensions, clusters: 4, seed: 0xC1)
        let sink = try T.open(folder, nodes: nodes)
        try await T.prepare(sink)
        let start = try #require(sink.annState.live?.generation)
        let records = T.records(generator.next(10))
        try await sink.upsert(records)  // labels 0…9
        try await sink.delete([records[2].id, records[5].id])  // frees 2 and 5
        try await sink.upsert(T.records(generator.next(1), from: 10))  // takes a freed label
        let log = LocalANNChangeLog(environment: sink.environment)
        try sink.environment.read { (txn: LMDBTransaction) throws in
            #expect(try log.labels(after: start, through: start + 1, txn) == Set(0..<10))
            #expect(try log.labels(after: start + 1, through: start + 2, txn) == [2, 5])
            let reused = try #require(try log.labels(after: start + 2, through: start + 3, txn))
            #expect(reused.count == 1 && reused.isSubset(of: [2, 5]))
            #expect(try log.labels(after: start, through: start + 3, txn) == Set(0..<10))
            #expect(try log.labels(after: start + 3, through: start + 3, txn) == [])
            #expect(try log.labels(after: start + 3, through: start + 4, txn) == nil, "no such generation yet")
            #expect(try log.covers(after: start, through: start + 3, txn))
        }
        try sink.rebuildIndex()
        let rebuilt = try #require(sink.annState.live?.generation)
        try sink.environment.read { (txn: LMDBTransaction) throws in
            #expect(try log.labels(after: start, through: rebuilt, txn) == nil)
            #expect(try !log.covers(after: start + 3, through: rebuilt, txn))
        }
    }

    @Test(
        "a trim keeps the newest entries up to the labels asked for, oldest removed first",
        arguments: LocalSinkANNTests.nodeKinds
    )
    func trimKeepsTheNewest(nodes: PipelineConfiguration.Sink.HNSW.Nodes) async throws {
        let folder = T.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: T.dimensions, clusters: 4, seed: 0xC2)
        let sink = try T.open(folder, nodes: nodes)
        try await T.prepare(sink)
        let start = try #require(sink.annState.live?.generation)
        for batch in 0..<5 { try await sink.upsert(T.records(generator.next(10), from: batch * 10)) }
        let log = LocalANNChangeLog(environment: sink.environment)
        try sink.environment.write { try log.trim(keepingLabels: 25, $0) }
        try sink.environment.read { (txn: LMDBTransaction) throws in
            #expect(try log.labels(after: start + 3, through: start + 5, txn) == Set(30..<50))
            #expect(try log.labels(after: start + 2, through: start + 5, txn) == nil, "trimmed")
        }
        // finish() saves the graph and trims to what readers may still need: here nothing goes.
        try await sink.finish()
        try sink.environment.read { (txn: LMDBTransaction) throws in
            #expect(try log.covers(after: start + 3, through: start + 5, txn))
        }
    }
}
