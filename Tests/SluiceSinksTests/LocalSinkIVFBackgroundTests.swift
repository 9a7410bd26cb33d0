import Dispatch
import Foundation
import SluiceCore
import SluiceLMDB
import SluiceTesting
import Synchronization
import Testing

@testable import SluiceSinks

/// The IVF index trained on the trainer's thread (``LocalIVFTrainer``) while the writer writes and readers
/// search: the trainer is held at a step (after k-means; after a part of the lists is computed from a
/// snapshot, before it is written), writes and searches run meanwhile, and once the training ends every live
/// label is in exactly one slot of the current epoch (``LocalSink/ivfProblems()``). Events, never timing:
/// the test waits for the trainer to reach a step, and the trainer waits for the test.
@Suite struct LocalSinkIVFBackgroundTests {
    static let dimensions = LocalSinkIVFTests.dimensions

    static func id(_ n: Int) -> VectorID { VectorID(rawValue: String(format: "v%06d", n)) }

    /// A prepared store with `ivf` in `folder`, trained from `exactBelow` vectors, 16 pages a commit.
    static func sink(_ folder: URL, exactBelow: Int, nprobe: Int? = nil) async throws -> LocalSink {
        let sink = try LocalSinkIVFTests.open(folder, exactBelow: exactBelow, nprobe: nprobe, commitPages: 16)
        try await LocalSinkIVFTests.prepare(sink, dimensions: Self.dimensions)
        return sink
    }

    /// Holds the trainer at `steps`: each time it reaches one, `reached` yields it and the trainer waits until
    /// the test calls `release()`. The end of each job is yielded too (`.ended`, not held unless asked for), so
    /// that a job that fails or stops before a held step ends the test's wait instead of hanging it.
    final class Holds: Sendable {
        let reached: AsyncStream<LocalIVFTrainer.Step>
        private let continuation: AsyncStream<LocalIVFTrainer.Step>.Continuation
        private let gate = DispatchSemaphore(value: 0)
        private let trainer: LocalIVFTrainer
        private let steps: [LocalIVFTrainer.Step]

        init(_ sink: LocalSink, at steps: [LocalIVFTrainer.Step]) {
            (reached, continuation) = AsyncStream.makeStream()
            trainer = sink.ivfState.trainer
            self.steps = steps
            for step in steps {
                trainer.hold(at: step) { [continuation, gate] in
                    continuation.yield(step)
                    gate.wait()
                }
            }
            if !steps.contains(.ended) {
                trainer.hold(at: .ended) { [continuation] in continuation.yield(.ended) }
            }
        }

        /// Waits until the trainer reaches a held step.
        func next() async -> LocalIVFTrainer.Step? {
            var iterator = reached.makeAsyncIterator()
            return await iterator.next()
        }

        /// Lets the trainer go on; `holding: false` first stops holding it at any step.
        func release(holding: Bool = true) {
            if !holding {
                for step in steps + [.ended] { trainer.hold(at: step, nil) }
            }
            gate.signal()
        }
    }

    @Test(
        "records written, replaced and deleted while the trainer works are in the lists once it ends, deleted ones not; the writer never waits for k-means"
    )
    func writesDuringTraining() async throws {
        let folder = LocalSinkIVFTests.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 8, seed: 0xB61)
        let sink = try await Self.sink(folder, exactBelow: 200, nprobe: 65_536)
        let holds = Holds(sink, at: [.trained, .partComputed])
        try await sink.upsert(LocalSinkIVFTests.records(generator.next(200)))
        #expect(try LocalSinkIVFTests.current(sink) == nil)
        // The next write finds the store at exact_below and asks the trainer; it does not wait for it.
        try await sink.upsert(LocalSinkIVFTests.records(generator.next(1), from: 200))
        #expect(await holds.next() == .trained)
        // Held after k-means, before the epoch is recorded: the writer writes, searches scan.
        try await sink.upsert(LocalSinkIVFTests.records(generator.next(20), from: 300))
        try await sink.delete((100..<110).map(Self.id))
        for query in generator.next(3) {
            #expect(try await sink.search(query, k: 10) == (try sink.exactSearch(query, k: 10)))
        }
        holds.release()
        #expect(await holds.next() == .partComputed)
        // Held with the first part (labels 0..<16) computed from a snapshot, not yet written: replace some of
        // its records, delete others (their labels freed), and write new records that take the freed labels.
        var replaced: [Int: [Float]] = [:]
        for n in 0..<4 { replaced[n] = generator.next() }
        try await sink.upsert(replaced.keys.sorted().map { LocalSinkIVFTests.records([replaced[$0]!], from: $0)[0] })
        try await sink.delete((4..<8).map(Self.id))
        try await sink.upsert(LocalSinkIVFTests.records(generator.next(4), from: 400))
        let building = try sink.ivfDetails()["ivf_training"]
        #expect(building != nil, "the epoch in training is recorded and kept up to date by the writes")
        #expect(try sink.ivfProblems().isEmpty)
        for query in generator.next(3) {
            #expect(try await sink.search(query, k: 10) == (try sink.exactSearch(query, k: 10)))
        }
        holds.release(holding: false)
        try await sink.waitForIVFTraining()
        let epoch = try #require(try LocalSinkIVFTests.current(sink))
        let problems = try sink.ivfProblems()
        #expect(problems.isEmpty, "\(problems.prefix(5))")
        #expect(epoch.trainedOn >= 200)
        #expect(try await sink.count() == 201 + 20 - 10 - 4 + 4)
        // The replaced records are found by their new vectors, the deleted ones never.
        for (n, vector) in replaced {
            #expect(try await sink.search(vector, k: 1).first?.record.id == Self.id(n))
        }
        let gone = Set(((100..<110).map { $0 } + (4..<8).map { $0 }).map(Self.id))
        for query in generator.next(10) {
            #expect(try await sink.search(query, k: 20).allSatisfy { !gone.contains($0.record.id) })
        }
        #expect(sink.ivfTrainerCounts.trainings == 1)
    }

    @Test("while a retrain fills its lists, searches use the old epoch and answer as the exact scan does")
    func searchesDuringRetraining() async throws {
        let folder = LocalSinkIVFTests.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 10, seed: 0xB62)
        let sink = try await Self.sink(folder, exactBelow: 100, nprobe: 65_536)
        try await sink.upsert(LocalSinkIVFTests.records(generator.next(101)))
        try await sink.upsert(LocalSinkIVFTests.records(generator.next(1), from: 101))
        try await sink.waitForIVFTraining()
        let first = try #require(try LocalSinkIVFTests.current(sink))
        let holds = Holds(sink, at: [.partComputed])
        try await sink.upsert(LocalSinkIVFTests.records(generator.next(400), from: 102))
        try await sink.upsert(LocalSinkIVFTests.records(generator.next(1), from: 502))
        #expect(await holds.next() == .partComputed)
        #expect(try LocalSinkIVFTests.current(sink)?.epoch == first.epoch, "the old epoch is searched meanwhile")
        for query in generator.next(5) {
            #expect(try await sink.search(query, k: 10) == (try sink.exactSearch(query, k: 10)))
        }
        try await sink.delete((0..<30).map(Self.id))
        for query in generator.next(5) {
            #expect(try await sink.search(query, k: 10) == (try sink.exactSearch(query, k: 10)))
        }
        holds.release(holding: false)
        try await sink.waitForIVFTraining()
        let second = try #require(try LocalSinkIVFTests.current(sink))
        #expect(second.epoch != first.epoch && second.trainedOn >= 4 * first.trainedOn)
        #expect(try LocalSinkIVFTests.keys(of: first.epoch, sink) == 0, "the retired epoch's entries are deleted")
        #expect(try sink.ivfProblems().isEmpty)
        for query in generator.next(5) {
            #expect(try await sink.search(query, k: 10) == (try sink.exactSearch(query, k: 10)))
        }
    }

    /// Counts the runs of a job.
    final class Runs: Sendable {
        let count = Mutex(0)
    }

    @Test("asking the trainer while its job runs runs that job once more when it ends, not once a request")
    func askedWhileRunning() {
        let trainer = LocalIVFTrainer()
        let runs = Runs()
        let (started, gate) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        trainer.request {
            runs.count.withLock { $0 += 1 }
            started.signal()
            gate.wait()
        }
        started.wait()
        for _ in 0..<3 { trainer.request {} }  // while it runs: the job is asked for again
        #expect(trainer.isBusy)
        gate.signal()
        started.wait()  // its second run
        gate.signal()
        trainer.settle()
        #expect(runs.count.withLock { $0 } == 2)
        #expect(!trainer.isBusy)
    }

    @Test("emptying the store stops a training and leaves nothing of it")
    func removeAllStopsTraining() async throws {
        let folder = LocalSinkIVFTests.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 8, seed: 0xB63)
        let sink = try await Self.sink(folder, exactBelow: 100)
        let holds = Holds(sink, at: [.partComputed])
        try await sink.upsert(LocalSinkIVFTests.records(generator.next(101)))
        try await sink.upsert(LocalSinkIVFTests.records(generator.next(1), from: 101))
        #expect(await holds.next() == .partComputed)
        async let emptied: Void = sink.removeAll()
        holds.release(holding: false)
        try await emptied
        try await sink.waitForIVFTraining()
        #expect(try await sink.count() == 0)
        #expect(try LocalSinkIVFTests.current(sink) == nil)
        #expect(try sink.ivfDetails()["ivf_training"] == nil)
        #expect(try sink.ivfProblems().isEmpty)
    }
}
