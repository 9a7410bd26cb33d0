import Dispatch
import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// The graph follows the store's writes on a thread of its own (``LocalANNFollower``): a write returns
/// once committed, before the graph has taken it in. Behaviour only: what searches see while the graph is
/// a write behind, and that the graph and its saved copy end equal to the store.
@Suite struct LocalANNFollowerTests {
    typealias T = LocalSinkANNTests

    @Test("while the graph is a write behind, searches in the process see every committed record, exactly scored")
    func searchesWhileTheGraphFollows() async throws {
        let folder = T.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: T.dimensions, clusters: 10, seed: 0xF01)
        let sink = try T.open(folder)
        try await T.prepare(sink)
        try await sink.upsert(T.records(generator.next(400)))
        sink.settleIndex()
        let before = try #require(sink.annState.live?.generation)

        let gate = DispatchSemaphore(value: 0)
        sink.follower.hold(until: gate)
        let added = T.records(generator.next(100), from: 400)
        try await sink.upsert(added)  // committed and handed over; the graph has not taken it in
        #expect(sink.annState.live?.generation == before, "the graph is a write behind")
        #expect(sink.annState.expectedGeneration == before + 1, "the next write is tracked all the same")
        for record in added.prefix(20) {
            let hits = try await sink.search(record.vector, k: 10)
            #expect(hits.first?.record.id == record.id)
            #expect(hits.map(\.record.id) == (try sink.exactSearch(record.vector, k: 10)).map(\.record.id))
        }
        gate.signal()

        // The next write waits for nothing but the follower's slot; finish() saves what the store holds.
        try await sink.delete(added.prefix(10).map(\.id))
        try await sink.finish()
        #expect(sink.annState.live?.generation == before + 2)
        #expect(sink.annState.live?.index?.elementCount == 500)
        #expect(sink.annState.live?.index?.deletedCount == 10)
        let reader = try T.open(folder, readOnly: true)
        let query = added[50].vector
        #expect(try await reader.search(query, k: 1).first?.record.id == added[50].id)
        #expect(reader.annState.live?.generation == before + 2, "the saved graph is the store's generation")
    }

    @Test("a write the graph did not follow drops the graph only after what was handed over before it")
    func untrackedWriteSettlesFirst() async throws {
        let folder = T.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: T.dimensions, clusters: 10, seed: 0xF02)
        let sink = try T.open(folder)
        try await T.prepare(sink)
        try await sink.upsert(T.records(generator.next(200)))
        try await sink.removeAll()  // not followed by the graph: it is dropped
        #expect(sink.annState.live == nil)
        try await T.prepare(sink)
        try await sink.upsert(T.records(generator.next(50), from: 1000))
        sink.settleIndex()
        #expect(sink.annState.live?.index?.elementCount == 50, "a new graph, of the new records only")
    }
}
