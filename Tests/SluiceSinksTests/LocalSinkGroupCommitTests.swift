import Foundation
import SluiceCore
import SluiceLMDB
import SluiceTesting
import Testing

@testable import SluiceSinks

/// Group commit on the local store's writer: upserts waiting for the writer while it is busy share its next
/// transaction (one sync), within `sink.local_commit_pages`; a write that fails in a group fails alone.
/// The writer thread is held by a job of the test until the writes wait, so the groups are deterministic.
@Suite struct LocalSinkGroupCommitTests {
    static func makeSink(commitPages: Int = 256, mapSize: Int = 1 << 30) throws -> (LocalSink, URL) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "local-group-\(UInt64.random(in: 0...UInt64.max))"
        )
        return (try LocalSink(directory: dir, mapSize: mapSize, commitPages: commitPages), dir)
    }

    static func records(_ prefix: String, _ count: Int, dimensions: Int = 2) -> [VectorRecord] {
        (0..<count).map { index in
            VectorRecord(
                id: VectorID(rawValue: "\(prefix)-\(index)"),
                documentKey: "\(prefix).txt",
                ordinal: index,
                text: "\(prefix) sluice gate \(index)",
                vector: (0..<dimensions).map { Float(($0 + index) % 7) + 0.5 }
            )
        }
    }

    /// Holds the store's writer thread until the returned gate is opened.
    static func holdWriter(_ sink: LocalSink) async -> (gate: BlockingQueue<Void>, held: Task<Void, any Error>) {
        let gate = BlockingQueue<Void>()
        let started = BlockingQueue<Void>()
        let held = Task {
            try await sink.executor.run {
                started.append(())
                gate.take()
            }
        }
        _ = await Task.detached { started.take() }.value
        return (gate, held)
    }

    static func generation(_ sink: LocalSink) throws -> UInt64 {
        let ann = try sink.environment.database("ann")
        return try sink.environment.read { txn in
            try txn.get(ann, LocalSink.ANNKey.generation).map(LocalSink.number) ?? 0
        }
    }

    @Test("upserts waiting for the writer together are committed in one transaction, one generation")
    func waitingUpsertsShareOneTransaction() async throws {
        let (sink, dir) = try Self.makeSink()
        defer { TemporaryDirectory.remove(dir) }
        try await sink.prepare(embedder: EmbedderIdentity(provider: "t", model: "m", dimensions: 2))
        let (generation, transactions) = (try Self.generation(sink), sink.commits.transactions)
        let (gate, held) = await Self.holdWriter(sink)
        let first = Task { try await sink.upsert(Self.records("a", 20)) }
        let second = Task { try await sink.upsert(Self.records("b", 30)) }
        try await waitUntil { sink.commits.waitingCount == 2 }
        gate.append(())
        try await held.value
        try await first.value
        try await second.value
        #expect(sink.commits.transactions == transactions + 1)
        #expect(try Self.generation(sink) == generation + 1)
        #expect(try await sink.count() == 50)
        let hits = try await sink.search(SearchRequest(mode: .keyword, text: "sluice gate", k: 100))
        #expect(Set(hits.map { $0.record.documentKey }) == ["a.txt", "b.txt"])
        // A later lone write commits at once, in a transaction of its own.
        try await sink.upsert(Self.records("c", 5))
        #expect(sink.commits.transactions == transactions + 2)
        #expect(try await sink.count() == 55)
    }

    @Test("a group takes the waiting writes while they fit in sink.local_commit_pages, in order")
    func theBudgetBoundsAGroup() async throws {
        let (sink, dir) = try Self.makeSink(commitPages: 4)
        defer { TemporaryDirectory.remove(dir) }
        try await sink.prepare(embedder: EmbedderIdentity(provider: "t", model: "m", dimensions: 2))
        let generation = try Self.generation(sink)
        let transactions = sink.commits.transactions
        let (gate, held) = await Self.holdWriter(sink)
        var writes: [Task<Void, any Error>] = []
        for (index, prefix) in ["a", "b", "c"].enumerated() {
            writes.append(Task { try await sink.upsert(Self.records(prefix, 2)) })  // 2 pages each
            try await waitUntil { sink.commits.waitingCount == index + 1 }
        }
        gate.append(())
        try await held.value
        for write in writes { try await write.value }
        #expect(sink.commits.transactions == transactions + 2)  // a and b (4 pages), then c
        #expect(try Self.generation(sink) == generation + 2)
        #expect(try await sink.count() == 6)
    }

    @Test("a write LMDB refuses fails alone; the others of its group are committed")
    func aBadWriteFailsAlone() async throws {
        let (sink, dir) = try Self.makeSink()
        defer { TemporaryDirectory.remove(dir) }
        try await sink.prepare(embedder: EmbedderIdentity(provider: "t", model: "m", dimensions: 2))
        let (gate, held) = await Self.holdWriter(sink)
        let good = Task { try await sink.upsert(Self.records("a", 10)) }
        try await waitUntil { sink.commits.waitingCount == 1 }
        // LMDB keys are at most 511 bytes: the put fails inside the transaction.
        var bad = Self.records("bad", 1)[0]
        bad.id = VectorID(rawValue: String(repeating: "x", count: 600))
        let refused = Task { [bad] in try await sink.upsert([bad]) }
        try await waitUntil { sink.commits.waitingCount == 2 }
        let later = Task { try await sink.upsert(Self.records("c", 10)) }
        try await waitUntil { sink.commits.waitingCount == 3 }
        gate.append(())
        try await held.value
        try await good.value
        await #expect(throws: SluiceError.self) { try await refused.value }
        try await later.value
        #expect(try await sink.count() == 20)
        let hits = try await sink.search(SearchRequest(mode: .keyword, text: "sluice gate", k: 100))
        #expect(Set(hits.map { $0.record.documentKey }) == ["a.txt", "c.txt"])
    }

    @Test("a write that fills the map fails alone; a small one waiting with it is committed")
    func aFullMapFailsTheLargeWriteAlone() async throws {
        let (sink, dir) = try Self.makeSink(commitPages: 100_000, mapSize: 1 << 20)
        defer { TemporaryDirectory.remove(dir) }
        try await sink.prepare(embedder: EmbedderIdentity(provider: "t", model: "m", dimensions: 1024))
        let (gate, held) = await Self.holdWriter(sink)
        let large = Task { try await sink.upsert(Self.records("large", 400, dimensions: 1024)) }
        try await waitUntil { sink.commits.waitingCount == 1 }
        let small = Task { try await sink.upsert(Self.records("small", 3, dimensions: 1024)) }
        try await waitUntil { sink.commits.waitingCount == 2 }
        gate.append(())
        try await held.value
        do {
            try await large.value
            Issue.record("400 vectors of 4 KiB fit in a 1 MiB map")
        } catch let error as SluiceError {
            #expect(error.code == .sinkFailed, "\(error)")
        }
        try await small.value
        #expect(try await sink.count() == 3)
    }

    @Test("a caller cancelled while its write waits gets CancellationError and nothing is written")
    func aCancelledWaitingWriteIsNotCommitted() async throws {
        let (sink, dir) = try Self.makeSink()
        defer { TemporaryDirectory.remove(dir) }
        try await sink.prepare(embedder: EmbedderIdentity(provider: "t", model: "m", dimensions: 2))
        let (gate, held) = await Self.holdWriter(sink)
        let cancelled = Task { try await sink.upsert(Self.records("a", 10)) }
        try await waitUntil { sink.commits.waitingCount == 1 }
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(sink.commits.waitingCount == 0)
        gate.append(())
        try await held.value
        #expect(try await sink.count() == 0)
        try await sink.upsert(Self.records("b", 2))  // the writer still takes writes
        #expect(try await sink.count() == 2)
    }
}
