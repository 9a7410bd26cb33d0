import Dispatch
import Foundation
import SluiceCore
import SluiceLMDB
import SluiceTesting
import Testing

@testable import SluiceSinks

/// The graph's first build runs off the writer thread (``LocalANNBuilder``): writes and searches go on while
/// it is built from a snapshot; searches scan (exactly) until it is ready; it is brought up to the store by
/// the change log and then follows every write. Behaviour only: every wait is for an event (a semaphore the
/// build signals, or the build's end), never for a duration.
@Suite struct LocalANNBuilderTests {
    typealias T = LocalSinkANNTests

    static func open(
        _ folder: URL,
        exactBelow: Int = 200,
        nodes: PipelineConfiguration.Sink.HNSW.Nodes = .memory
    ) throws -> LocalSink {
        var section = PipelineConfiguration.Sink()
        section.hnsw.exactBelow = exactBelow
        section.hnsw.nodes = nodes
        return try LocalSink(directory: folder, index: .init(section: section))
    }

    /// The store's generation and live count, read from LMDB.
    static func storeState(_ sink: LocalSink) throws -> (generation: UInt64, count: Int) {
        let (ann, vectors) = (try sink.environment.database("ann"), try sink.environment.database("vectors"))
        return try sink.environment.read { txn in
            (try txn.get(ann, LocalSink.ANNKey.generation).map(LocalSink.number) ?? 0, try txn.count(vectors))
        }
    }

    /// The graph in memory is at the store's generation and holds exactly its records, and a search that
    /// visits every node answers as the scan does.
    static func expectGraphMatchesStore(_ sink: LocalSink, queries: [[Float]]) async throws {
        let (generation, count) = try storeState(sink)
        let live = try #require(sink.annState.live)
        let index = try #require(live.index)
        #expect(live.generation == generation)
        #expect(index.elementCount - index.deletedCount == count)
        sink.setSearchBreadth(5000)
        for query in queries {
            let hits = try await sink.search(query, k: 10)
            #expect(hits.map(\.record.id) == (try sink.exactSearch(query, k: 10)).map(\.record.id))
        }
    }

    @Test(
        "the write that finds the store at exact_below returns before the graph is built; searches scan exactly until it is ready, and it then matches the store",
        arguments: LocalSinkANNTests.nodeKinds
    )
    func buildRunsBesideTheWrites(nodes: PipelineConfiguration.Sink.HNSW.Nodes) async throws {
        let folder = T.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: T.dimensions, clusters: 8, seed: 0xB01)
        let sink = try Self.open(folder, nodes: nodes)
        try await T.prepare(sink)
        let gate = DispatchSemaphore(value: 0)
        sink.builder.hold(until: gate)
        // A write that finds twice exact_below (400) vectors or more starts the build (held), and every write
        // goes on without waiting for it.
        try await sink.upsert(T.records(generator.next(450)))
        try await sink.upsert(T.records(generator.next(20), from: 450))
        #expect(sink.builder.isRunning)
        #expect(sink.annState.live == nil, "no graph while it is being built")
        // `sluice status` and `/ready` say so (``LocalSink/graphDetails()``).
        #expect(try await sink.info().details["hnsw_graph"] == "building")
        for query in generator.next(10) {
            let hits = try await sink.search(query, k: 10)
            #expect(hits.map(\.record.id) == (try sink.exactSearch(query, k: 10)).map(\.record.id))
        }
        // More writes while the build waits: labelled and logged, so the build catches up with them.
        try await sink.upsert(T.records(generator.next(30), from: 470))
        try await sink.delete(T.records(generator.next(5), from: 0).map(\.id))
        gate.signal()
        sink.settleIndex()
        try await Self.expectGraphMatchesStore(sink, queries: generator.next(10))
        let details = try await sink.info().details
        #expect(details["hnsw_graph"] == "built", "\(details)")
        #expect(details["hnsw_graph_generation"] == String(try Self.storeState(sink).generation))
        #expect(details["hnsw_graph_behind"] == "0")
        #expect(details["hnsw_nodes"] == nodes.rawValue)

        // From then on the follower follows every write.
        try await sink.upsert(T.records(generator.next(10), from: 500))
        sink.settleIndex()
        #expect(sink.annState.live?.generation == (try Self.storeState(sink)).generation)
        try await sink.finish()
        #expect(try T.indexFiles(folder).count == 1)
    }

    @Test(
        "the build keeps a core for the load until finish() waits for it: its catch-up then inserts on every core, and the saved graph matches the store",
        arguments: LocalSinkANNTests.nodeKinds
    )
    func finishHurriesTheBuild(nodes: PipelineConfiguration.Sink.HNSW.Nodes) async throws {
        let folder = T.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: T.dimensions, clusters: 8, seed: 0xB08)
        var section = PipelineConfiguration.Sink()
        section.hnsw.exactBelow = 100
        section.hnsw.nodes = nodes
        var settings = LocalSink.IndexSettings(section: section)
        settings.buildThreads = 4
        let sink = try LocalSink(directory: folder, index: settings)
        try await T.prepare(sink)
        let (reached, gate) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        sink.builder.pauseBeforeCatchUp(reached: reached, gate: gate)
        try await sink.upsert(T.records(generator.next(600)))
        try await sink.upsert(T.records(generator.next(10), from: 600))  // finds 600 ≥ 200: starts the build
        // Built from its snapshot (batches of 256) while the writes went on.
        try #require(reached.wait(timeout: .now() + 300) == .success, "the build never reached its catch-up")
        #expect(sink.builder.mostThreads == (3, 0))
        try await sink.upsert(T.records(generator.next(300), from: 610))  // for the catch-up
        // Without the hurry the paused catch-up would wait on `gate` for ever and so would finish(): a watchdog
        // opens the gate after 300 seconds, so the test then fails on the threads rather than hanging.
        let watchdog = Task.detached {
            try await Task.sleep(for: .seconds(300))
            gate.signal()
        }
        defer { watchdog.cancel() }
        try await sink.finish()  // hurries the paused build: its catch-up on every core
        #expect(sink.builder.mostThreads == (3, 4))
        #expect(try T.indexFiles(folder).count == 1)
        try await Self.expectGraphMatchesStore(sink, queries: generator.next(5))
    }

    @Test(
        "a write that commits while the build catches up is taken in before the next write",
        arguments: LocalSinkANNTests.nodeKinds
    )
    func writeRacingTheCatchUp(nodes: PipelineConfiguration.Sink.HNSW.Nodes) async throws {
        let folder = T.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: T.dimensions, clusters: 8, seed: 0xB02)
        let sink = try Self.open(folder, nodes: nodes)
        try await T.prepare(sink)
        let (reached, gate) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        sink.builder.pauseBeforeCatchUp(reached: reached, gate: gate)
        try await sink.upsert(T.records(generator.next(450)))
        try await sink.upsert(T.records(generator.next(10), from: 450))  // finds 400 or more: starts the build
        reached.wait()  // built from its snapshot, not yet caught up
        let replaced = T.records(generator.next(20), from: 100)  // new vectors for existing ids
        try await sink.upsert(replaced)
        try await sink.delete(T.records(generator.next(10), from: 200).map(\.id))
        gate.signal()
        sink.settleIndex()
        try await Self.expectGraphMatchesStore(sink, queries: replaced.prefix(5).map(\.vector) + generator.next(5))

        // A write after the build: caught up by the writer (if the build's catch-up missed any) and followed.
        try await sink.upsert(T.records(generator.next(10), from: 500))
        sink.settleIndex()
        try await Self.expectGraphMatchesStore(sink, queries: generator.next(5))
    }

    @Test(
        "a write below twice exact_below starts no build: nothing is built or saved, searches scan; the next writer builds it at its start and saves it",
        arguments: LocalSinkANNTests.nodeKinds
    )
    func smallStoreLeavesTheBuildToTheNextWriter(nodes: PipelineConfiguration.Sink.HNSW.Nodes) async throws {
        let folder = T.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: T.dimensions, clusters: 8, seed: 0xB03)
        let queries = generator.next(5)
        do {
            let sink = try Self.open(folder, nodes: nodes)
            try await T.prepare(sink)
            try await sink.upsert(T.records(generator.next(250)))
            try await sink.upsert(T.records(generator.next(140), from: 250))  // finds 250: past 200, below 400
            #expect(!sink.builder.isRunning, "no build started by a write below twice exact_below")
            try await sink.finish()
            #expect(sink.annState.live == nil)
            #expect(try T.indexFiles(folder).isEmpty, "nothing saved")
            for query in queries {
                let hits = try await sink.search(query, k: 10)
                #expect(hits.map(\.record.id) == (try sink.exactSearch(query, k: 10)).map(\.record.id))
            }
        }
        // The next run: its prepare starts the build, and its finish waits for it and saves the graph.
        let next = try Self.open(folder, nodes: nodes)
        try await T.prepare(next)
        #expect(next.builder.isRunning || next.annState.live?.index != nil, "prepare starts the build")
        try await next.finish()
        #expect(try T.indexFiles(folder).count == 1)
        try await Self.expectGraphMatchesStore(next, queries: queries)
    }

    @Test(
        "finish() stops a build a write started when the store has since shrunk below twice exact_below, and saves nothing",
        arguments: LocalSinkANNTests.nodeKinds
    )
    func finishLeavesABuildOfAShrunkStore(nodes: PipelineConfiguration.Sink.HNSW.Nodes) async throws {
        let folder = T.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: T.dimensions, clusters: 8, seed: 0xB06)
        let sink = try Self.open(folder, nodes: nodes)
        try await T.prepare(sink)
        let (reached, gate) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        sink.builder.pauseBeforeCatchUp(reached: reached, gate: gate)
        try await sink.upsert(T.records(generator.next(450)))
        try await sink.upsert(T.records(generator.next(10), from: 450))  // finds 450: starts the build
        reached.wait()
        #expect(sink.builder.startedByWrite)
        try await sink.delete(T.records(generator.next(100), from: 0).map(\.id))  // 360 left
        try await sink.finish()  // stops the paused build
        #expect(!sink.builder.isRunning)
        #expect(try T.indexFiles(folder).isEmpty, "nothing saved")
        for query in generator.next(5) {
            let hits = try await sink.search(query, k: 10)
            #expect(hits.map(\.record.id) == (try sink.exactSearch(query, k: 10)).map(\.record.id))
        }
    }

    @Test(
        "finish() waits for a build a write started at twice exact_below or more, and saves the graph",
        arguments: LocalSinkANNTests.nodeKinds
    )
    func finishWaitsForALargeBuild(nodes: PipelineConfiguration.Sink.HNSW.Nodes) async throws {
        let folder = T.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: T.dimensions, clusters: 8, seed: 0xB04)
        let sink = try Self.open(folder, exactBelow: 100, nodes: nodes)
        try await T.prepare(sink)
        let gate = DispatchSemaphore(value: 0)
        sink.builder.hold(until: gate)
        try await sink.upsert(T.records(generator.next(250)))
        try await sink.upsert(T.records(generator.next(10), from: 250))  // finds 250 ≥ 200: starts the build
        #expect(sink.builder.startedByWrite)
        gate.signal()
        try await sink.finish()
        #expect(try T.indexFiles(folder).count == 1)
        try await Self.expectGraphMatchesStore(sink, queries: generator.next(5))
    }

    @Test(
        "a store written with exact is relabelled once, then built beside the writes; every record has a label",
        arguments: LocalSinkANNTests.nodeKinds
    )
    func unlabelledStoreIsRelabelledThenBuilt(nodes: PipelineConfiguration.Sink.HNSW.Nodes) async throws {
        let folder = T.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: T.dimensions, clusters: 8, seed: 0xB05)
        do {
            let exact = try T.open(folder, kind: .exact, nodes: nodes)
            try await T.prepare(exact)
            try await exact.upsert(T.records(generator.next(300)))
            try await exact.finish()
            let marked = try exact.environment.read { try exact.labelsMarked($0) }
            #expect(!marked, "a write with exact does not keep the labels")
        }
        let sink = try Self.open(folder, nodes: nodes)
        try await T.prepare(sink)  // relabels, and starts the build
        try await sink.upsert(T.records(generator.next(10), from: 300))
        sink.settleIndex()
        #expect(try sink.environment.read { try sink.labelsMarked($0) })
        try await Self.expectGraphMatchesStore(sink, queries: generator.next(5))
    }
    @Test(
        "the build and its catch-up copy the vectors from the data file, and the catch-up holds at most 256 of more changes at once",
        arguments: LocalSinkANNTests.nodeKinds
    )
    func catchUpReadsInBoundedBatches(nodes: PipelineConfiguration.Sink.HNSW.Nodes) async throws {
        let folder = T.folder()
        defer { TemporaryDirectory.remove(folder) }
        // 520 dimensions: 2,080 bytes of floats, so every record is larger than half a page (on its own pages,
        // which the map would fault in and a copy does not).
        let dimensions = 520
        var generator = ClusteredVectors(dimensions: dimensions, clusters: 8, seed: 0xB07)
        let sink = try Self.open(folder, nodes: nodes)
        try await T.prepare(sink, dimensions: dimensions)
        let (reached, gate) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        sink.builder.pauseBeforeCatchUp(reached: reached, gate: gate)
        try await sink.upsert(T.records(generator.next(450)))
        let beforeBuild = sink.environment.valuesCopied
        try await sink.upsert(T.records(generator.next(10), from: 450))  // finds 450 ≥ 400: starts the build
        reached.wait()  // built from its snapshot, not yet caught up
        #expect(
            sink.environment.valuesCopied - beforeBuild >= 450,
            "the build copied the snapshot's records (\(sink.environment.valuesCopied - beforeBuild) copies)"
        )
        // 620 changes while the build waits: more than two batches of the catch-up.
        try await sink.upsert(T.records(generator.next(300), from: 460))
        try await sink.upsert(T.records(generator.next(300), from: 760))
        try await sink.upsert(T.records(generator.next(20), from: 100))  // new vectors for existing ids
        let beforeCatchUp = sink.environment.valuesCopied
        gate.signal()
        sink.settleIndex()
        #expect(
            sink.environment.valuesCopied - beforeCatchUp >= 620,
            "the catch-up copied the changed records (\(sink.environment.valuesCopied - beforeCatchUp) copies)"
        )
        #expect(sink.annState.mostCatchUpVectorsHeld > 0, "a catch-up ran")
        #expect(
            sink.annState.mostCatchUpVectorsHeld <= LocalSink.catchUpBatch,
            "a catch-up held \(sink.annState.mostCatchUpVectorsHeld) changed vectors at once (620 or more changed)"
        )
        #expect(LocalSink.catchUpBatch == 256)
        try await Self.expectGraphMatchesStore(sink, queries: generator.next(5))
    }
}
