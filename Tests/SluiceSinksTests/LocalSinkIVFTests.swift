import Foundation
import SluiceCore
import SluiceLMDB
import SluiceTesting
import Synchronization
import Testing

@testable import SluiceSinks

/// The local store's IVF index (`sink.local_index: ivf`): the lists against the records after any sequence
/// of writes (``LocalSink/ivfProblems()``), training at `exact_below`, searches against the exact scan,
/// deletes, retraining at 4× growth, and switching index kinds. Behaviour only, never timing.
@Suite struct LocalSinkIVFTests {
    static let dimensions = 32
    static func records(_ vectors: [[Float]], from start: Int = 0) -> [VectorRecord] {
        LocalSinkANNTests.records(vectors, from: start)
    }

    static func folder() -> URL { LocalSinkANNTests.folder() }

    static func prepare(_ sink: LocalSink, dimensions: Int) async throws {
        try await LocalSinkANNTests.prepare(sink, dimensions: dimensions)
    }

    static func open(
        _ folder: URL,
        kind: PipelineConfiguration.Sink.LocalIndex = .ivf,
        exactBelow: Int = 100,
        nprobe: Int? = nil,
        commitPages: Int = 16
    ) throws -> LocalSink {
        var section = PipelineConfiguration.Sink()
        section.localIndex = kind
        section.ivf.exactBelow = exactBelow
        section.ivf.nprobe = nprobe
        section.hnsw.exactBelow = 0
        return try LocalSink(directory: folder, index: .init(section: section), commitPages: commitPages)
    }

    /// Asks the trainer for what the store needs now, as a write would, and waits until it is done, until it
    /// needs nothing more (training runs on the trainer's thread, `LocalSink+IVFTraining.swift`).
    static func train(_ sink: LocalSink) async throws {
        try await sink.waitForIVFTraining()
        while sink.ivfIndexed, try sink.nextIVFWork() != nil || sink.hasRetiredIVFEpochs() {
            try sink.ensureIVF()
            try await sink.waitForIVFTraining()
        }
    }

    /// The current epoch's number, lists and trained-on count (nil: none).
    static func current(_ sink: LocalSink) throws -> LocalIVFEpoch? {
        let ivf = try sink.environment.database(LocalIVFLayout.database)
        return try sink.environment.read { txn in
            guard let number = try txn.get(ivf, LocalIVFLayout.current).map({ LocalIVFLayout.uint32($0) }) else {
                return nil
            }
            return try sink.ivfEpoch(number, txn)
        }
    }

    /// Keys of `epoch` left in the lists and places.
    static func keys(of epoch: UInt32, _ sink: LocalSink) throws -> Int {
        let prefix = LocalIVFLayout.bigEndian(epoch)
        var count = 0
        try sink.environment.read { txn in
            for name in [LocalIVFLayout.listsDatabase, LocalIVFLayout.whereDatabase] {
                try txn.forEach(try sink.environment.database(name), from: prefix) { key, _ in
                    guard key.starts(with: prefix) else { return false }
                    count += 1
                    return true
                }
            }
        }
        return count
    }

    @Test("after any sequence of upserts, replaces and deletes every live label is in exactly one slot")
    func invariantUnderChurn() async throws {
        let folder = Self.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 8, seed: 0x1F1)
        var random = LocalIVFTraining.SplitMix(seed: 0xC4A)
        let sink = try Self.open(folder, exactBelow: 60)
        try await Self.prepare(sink, dimensions: Self.dimensions)
        var live = Set<Int>()
        for step in 0..<40 {
            // Upserts of new and existing ids (replaces), and deletes, over a range of 400 ids.
            let ids = (0..<Int(random.next() % 30 + 1)).map { _ in Int(random.next() % 400) }
            if step % 3 == 2 {
                try await sink.delete(ids.map { VectorID(rawValue: String(format: "v%06d", $0)) })
                live.subtract(ids)
            } else {
                try await sink.upsert(ids.map { Self.records([generator.next()], from: $0)[0] })
                live.formUnion(ids)
            }
            let problems = try sink.ivfProblems()
            #expect(problems.isEmpty, "step \(step): \(problems.prefix(5))")
        }
        #expect(try await sink.count() == live.count)
        try await Self.train(sink)
        #expect(try sink.ivfProblems().isEmpty)
        #expect(try Self.current(sink) != nil, "trained once the store reached exact_below")
    }

    @Test("the lists stay whole when blocks fill, empty and move: deletes move a list's last entry into the hole")
    func deletesMoveTheLastEntry() async throws {
        let folder = Self.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 1, spread: 0.1, seed: 0x2F1)
        let sink = try Self.open(folder, exactBelow: 4)
        try await Self.prepare(sink, dimensions: Self.dimensions)
        try await sink.upsert(Self.records(generator.next(4)))
        // One cluster: most vectors share a list, over several blocks of ten.
        try await sink.upsert(Self.records(generator.next(60), from: 4))
        // Trained at 4 (4 lists), again at 16 or more (4×).
        try await Self.train(sink)
        #expect(try Self.current(sink)?.trainedOn ?? 0 >= 16)
        for id in [0, 13, 27, 40, 41, 42, 63, 5, 6, 7, 8, 9, 10] {
            try await sink.delete([VectorID(rawValue: String(format: "v%06d", id))])
            let problems = try sink.ivfProblems()
            #expect(problems.isEmpty, "after deleting \(id): \(problems.prefix(5))")
        }
    }

    @Test(
        "below exact_below nothing is trained and searches scan; the write that finds the store at that size trains 2√n lists, deterministically"
    )
    func trainsAtExactBelow() async throws {
        var centroids: [[Float]] = []
        for _ in 0..<2 {
            let folder = Self.folder()
            defer { TemporaryDirectory.remove(folder) }
            var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 10, seed: 0x3F1)
            let sink = try Self.open(folder, exactBelow: 400)
            try await Self.prepare(sink, dimensions: Self.dimensions)
            try await sink.upsert(Self.records(generator.next(399)))
            try await sink.waitForIVFTraining()
            #expect(try Self.current(sink) == nil)
            let query = generator.next()
            #expect(try await sink.search(query, k: 5) == (try sink.exactSearch(query, k: 5)))
            try await sink.upsert(Self.records(generator.next(1), from: 399))
            try await sink.waitForIVFTraining()
            #expect(try Self.current(sink) == nil, "the write that reached the size found the store below it")
            // What the next write would do before it writes: the trainer trains on the 400.
            try await Self.train(sink)
            let epoch = try #require(try Self.current(sink))
            #expect(epoch.lists == 40 && epoch.trainedOn == 400)  // 2√400
            #expect(try sink.ivfProblems().isEmpty)
            let details = try await sink.info().details
            #expect(details["index"] == "ivf" && details["ivf_lists"] == "40" && details["ivf_trained_on"] == "400")
            centroids.append(epoch.centroids)
        }
        #expect(centroids[0] == centroids[1], "the same store trains the same centroids")
    }

    @Test("with nprobe = nlist the result is the exact scan's, ties broken the same way")
    func everyListIsTheScan() async throws {
        let folder = Self.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 12, seed: 0x4F1)
        let sink = try Self.open(folder, exactBelow: 50, nprobe: 65_536)
        try await Self.prepare(sink, dimensions: Self.dimensions)
        var vectors = generator.next(600)
        vectors += vectors.prefix(20)  // duplicates: equal scores, ranked by id as the scan ranks them
        try await sink.upsert(Self.records(vectors))
        try await Self.train(sink)
        #expect(try Self.current(sink) != nil)
        for query in generator.next(20) + [vectors[3]] {
            let found = try await sink.search(query, k: 10)
            let exact = try sink.exactSearch(query, k: 10)
            #expect(found.map(\.record.id) == exact.map(\.record.id))
            #expect(found.map(\.score) == exact.map(\.score))
        }
    }

    @Test("recall@10 with nprobe auto is at least 0.95 on clustered vectors; deleted records are never returned")
    func recallAndDeletes() async throws {
        let folder = Self.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 40, spread: 1.0, seed: 0x5F1)
        let sink = try Self.open(folder, exactBelow: 1000, commitPages: 256)
        try await Self.prepare(sink, dimensions: Self.dimensions)
        let vectors = generator.next(16_000)
        for start in stride(from: 0, to: vectors.count, by: 2000) {
            try await sink.upsert(Self.records(Array(vectors[start..<start + 2000]), from: start))
        }
        try await Self.train(sink)
        let epoch = try #require(try Self.current(sink))
        #expect(epoch.lists > LocalSink.IndexSettings.autoProbes, "auto probes fewer lists than there are")
        let recall = try await LocalSinkANNTests.recall(sink, queries: generator.next(100))
        #expect(recall >= 0.95, "recall@10 \(recall) at \(epoch.lists) lists")
        let deleted = (0..<200).map { $0 * 7 }
        try await sink.delete(deleted.map { VectorID(rawValue: String(format: "v%06d", $0)) })
        let gone = Set(deleted.map { String(format: "v%06d", $0) })
        for id in deleted.prefix(40) {
            let hits = try await sink.search(vectors[id], k: 10)
            #expect(hits.count == 10)
            #expect(hits.allSatisfy { !gone.contains($0.record.id.rawValue) })
        }
        #expect(try sink.ivfProblems().isEmpty)
    }

    @Test("the training sample is held as its records' labels, 8 bytes a vector, and let go before the lists fill")
    func sampleMemory() async throws {
        let folder = Self.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 10, seed: 0x7F1)
        let sink = try Self.open(folder, exactBelow: 400)
        try await Self.prepare(sink, dimensions: Self.dimensions)
        let heldWhileFilling = Mutex<[Int]>([])
        sink.ivfState.trainer.hold(at: .partComputed) { [sink] in
            heldWhileFilling.withLock { $0.append(sink.ivfTrainerCounts.sampleHeld) }
        }
        try await sink.upsert(Self.records(generator.next(400)))
        try await Self.train(sink)
        let sampled = LocalIVFTraining.sampleSize(
            lists: LocalIVFTraining.lists(forVectors: 400),
            dimensions: Self.dimensions
        )
        #expect(sampled > 400, "the whole store is sampled")
        let counts = sink.ivfTrainerCounts
        #expect(counts.trainings == 1)
        // A float sample grown by appending held at least 400 × 32 × 4 bytes, 8-bit codes 4 + 32 a vector;
        // k-means reads the vectors from the store, so the sample holds only their labels.
        #expect(counts.largestSample == 400 * 8)
        #expect(counts.sampleHeld == 0)
        let held = heldWhileFilling.withLock { $0 }
        #expect(!held.isEmpty && held.allSatisfy { $0 == 0 }, "sample bytes held while filling: \(held)")
        #expect(
            LocalIVFTraining.sampleSize(lists: 2000, dimensions: 384) * 8 <= 1 << 20,
            "at a million 384-d vectors the sample holds less than a MB"
        )
    }

    @Test("at 4× the vectors it was trained on, a new epoch is trained and the old one's entries are deleted")
    func retrainsAtFourTimes() async throws {
        let folder = Self.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 10, seed: 0x6F1)
        let sink = try Self.open(folder, exactBelow: 100)
        try await Self.prepare(sink, dimensions: Self.dimensions)
        try await sink.upsert(Self.records(generator.next(100)))
        try await Self.train(sink)
        let first = try #require(try Self.current(sink))
        #expect(first.trainedOn == 100)
        try await sink.upsert(Self.records(generator.next(299), from: 100))
        try await Self.train(sink)
        #expect(try Self.current(sink)?.epoch == first.epoch, "not yet 4×")
        try await sink.upsert(Self.records(generator.next(1), from: 399))
        try await Self.train(sink)
        let second = try #require(try Self.current(sink))
        #expect(second.epoch != first.epoch && second.trainedOn == 400 && second.lists == 40)
        #expect(try Self.keys(of: first.epoch, sink) == 0, "the retired epoch's entries are deleted")
        #expect(try sink.ivfProblems().isEmpty)
        let query = generator.next()
        #expect(
            try await sink.search(query, k: 1).first?.record.id == (try sink.exactSearch(query, k: 1)).first?.record.id
        )
    }

    @Test("switching hnsw → ivf → exact → ivf builds the lists anew each time; searches stay right")
    func switchingKinds() async throws {
        let folder = Self.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 10, seed: 0x7F1)
        do {
            let sink = try Self.open(folder, kind: .hnsw)
            try await Self.prepare(sink, dimensions: Self.dimensions)
            try await sink.upsert(Self.records(generator.next(300)))
            try await sink.finish()
        }
        var epochs: [UInt32] = []
        for (round, kind) in [PipelineConfiguration.Sink.LocalIndex.ivf, .exact, .ivf].enumerated() {
            let sink = try Self.open(folder, kind: kind, nprobe: 65_536)
            try await Self.prepare(sink, dimensions: Self.dimensions)
            try await sink.upsert(Self.records(generator.next(20), from: 300 + 20 * round))
            try await sink.delete([VectorID(rawValue: String(format: "v%06d", round))])
            try await Self.train(sink)
            #expect(try sink.ivfProblems().isEmpty, "\(kind)")
            let current = try Self.current(sink)
            #expect((current != nil) == (kind == .ivf), "\(kind): \(String(describing: current))")
            if let current { epochs.append(current.epoch) }
            let query = generator.next()
            #expect(
                try await sink.search(query, k: 5).map(\.record.id)
                    == (try sink.exactSearch(query, k: 5)).map(\.record.id)
            )
            try await sink.finish()
        }
        #expect(epochs.count == 2 && epochs[0] != epochs[1])
        #expect(try Self.keys(of: epochs[0], LocalSink(directory: folder)) == 0)
    }
}
