import Dispatch
import Foundation
import SluiceCore
import SluiceLMDB
import SluiceTesting
import Synchronization
import Testing

@testable import SluiceSinks

/// The keyword index's merges run behind the writes, in transactions of their own (``KeywordMerger``):
/// a write transaction writes its batch's segment and merges nothing; readers see the old segments until a
/// merge commits; records replaced or deleted between a merge's plan and its commit stay skipped.
@Suite struct KeywordMergesTests {
    typealias Keyword = LocalSinkKeywordTests

    static let words = ["invoice", "total", "tax", "refund", "shipping", "date", "page", "cent", "CHF", "EUR"]

    static func text(_ generator: inout SplitMix64) -> String {
        (0..<(1 + Int(generator.next() % 10))).map { _ in words[Int(generator.next() % UInt64(words.count))] }
            .joined(separator: " ")
    }

    static func segments(_ sink: LocalSink) throws -> [KeywordSegment] {
        try sink.environment.read { try KeywordIndex(environment: sink.environment).load($0).segments }
    }

    /// The dead marks (`d<number>`) the records database holds.
    static func deadMarks(_ sink: LocalSink) throws -> Int {
        let records = try sink.environment.database(KeywordIndex.recordsDatabase)
        return try sink.environment.read { txn in
            var count = 0
            try txn.forEach(records, from: [UInt8(ascii: "d")]) { key, _ in
                guard key.first == UInt8(ascii: "d") else { return false }
                count += 1
                return true
            }
            return count
        }
    }

    /// Upserts `rounds` batches of `size` new records (ids `r0`, `r1`, …), one write each; returns them by id.
    static func write(_ sink: LocalSink, rounds: Int, of size: Int, seed: UInt64) async throws -> [String: VectorRecord]
    {
        var generator = SplitMix64(seed: seed)
        var live: [String: VectorRecord] = [:]
        for round in 0..<rounds {
            let batch = (0..<size).map { Keyword.record("r\(round * size + $0)", Self.text(&generator)) }
            try await sink.upsert(batch)
            for record in batch { live[record.id.rawValue] = record }
        }
        return live
    }

    /// A sink whose merge thread runs nothing until the gate is signalled.
    static func openHeld(_ dir: URL) throws -> (LocalSink, DispatchSemaphore) {
        let sink = try LocalSink(directory: dir)
        let gate = DispatchSemaphore(value: 0)
        sink.keywordMerger.hold(until: gate)
        return (sink, gate)
    }

    @Test("a write transaction adds its batch's segment and merges nothing; the merge thread merges after it")
    func writesDoNotMerge() async throws {
        let dir = Keyword.directory()
        defer { TemporaryDirectory.remove(dir) }
        let (sink, gate) = try Self.openHeld(dir)
        let live = try await Self.write(sink, rounds: 20, of: 3, seed: 0x3E46)
        let unmerged = try Self.segments(sink)
        #expect(unmerged.count == 20 && unmerged.allSatisfy { $0.level == 0 }, "\(unmerged)")
        let records = live.keys.sorted().compactMap { live[$0] }
        try await Keyword.expectSameRanking(sink, "invoice total CHF", records)

        gate.signal()
        sink.settleKeywordMerges()
        let merged = try Self.segments(sink)
        // 20 level-0 segments: two merges of 8 into level 1, 4 left at level 0.
        #expect(merged.map(\.level) == [1, 1, 0, 0, 0, 0], "\(merged)")
        #expect(merged.map(\.first) == [1, 25, 49, 52, 55, 58])
        for query in ["invoice total CHF", "refund", "shipping date cent EUR"] {
            try await Keyword.expectSameRanking(sink, query, records)
        }
    }

    @Test("records replaced or deleted between a merge's plan and its commit stay skipped, and their marks stay")
    func writesBetweenPlanAndCommit() async throws {
        let dir = Keyword.directory()
        defer { TemporaryDirectory.remove(dir) }
        let (sink, gate) = try Self.openHeld(dir)
        defer { gate.signal() }
        var live = try await Self.write(sink, rounds: 8, of: 2, seed: 0x3E47)
        // One record dead before the plan: the merged segment drops its postings and its mark.
        try await sink.delete([VectorID(rawValue: "r0")])
        live["r0"] = nil
        let index = KeywordIndex(environment: sink.environment)
        let plan = try sink.environment.read { txn in
            try index.planMerge(Array(try index.load(txn).segments.prefix(8)), txn)
        }
        #expect(plan.dead.count == 1)

        // After the plan: r3 replaced, r6 deleted (their numbers lie in the merged range), r20 new.
        let replaced = [Keyword.record("r3", "refund refund CHF"), Keyword.record("r20", "invoice refund")]
        try await sink.upsert(replaced)
        try await sink.delete([VectorID(rawValue: "r6")])
        for record in replaced { live[record.id.rawValue] = record }
        live["r6"] = nil
        #expect(try Self.deadMarks(sink) == 3)

        let applied = try sink.environment.write { txn in
            var state = try index.load(txn)
            guard try index.apply(plan, &state, txn) else { return false }
            try index.save(state, txn)
            return true
        }
        #expect(applied)
        let segments = try Self.segments(sink)
        #expect(segments.first?.level == 1)
        #expect(segments.first?.records == 15 && segments.first?.dead == 2, "\(segments)")
        #expect(try Self.deadMarks(sink) == 2, "the mark of r0 is gone, those of r3 and r6 stay")
        let records = live.keys.sorted().compactMap { live[$0] }
        for query in ["refund CHF", "invoice total", "tax page cent"] {
            try await Keyword.expectSameRanking(sink, query, records)
        }

        // The same plan again: its inputs are gone, so nothing is written.
        let again = try sink.environment.write { txn in
            var state = try index.load(txn)
            return try index.apply(plan, &state, txn)
        }
        #expect(!again)

        // Once a quarter of the merged segment is dead, the merge thread rewrites it without them.
        let gone = ["r1", "r2"].map { VectorID(rawValue: $0) }
        try await sink.delete(gone)
        for id in gone { live[id.rawValue] = nil }
        gate.signal()
        sink.settleKeywordMerges()
        #expect(try Self.segments(sink).first?.dead == 0)
        #expect(try Self.deadMarks(sink) == 0)
        for query in ["refund CHF", "invoice total", "tax page cent"] {
            try await Keyword.expectSameRanking(sink, query, records.filter { !gone.contains($0.id) })
        }
    }

    @Test("a reader during writes and merges never sees a record without its postings or postings without it")
    func readerSeesAConsistentIndex() async throws {
        let dir = Keyword.directory()
        defer { TemporaryDirectory.remove(dir) }
        let sink = try LocalSink(directory: dir)
        let environment = sink.environment
        let vectors = try environment.database("vectors")
        let writes = WriteTask {
            var generator = SplitMix64(seed: 0x3E48)
            for round in 0..<150 {
                // Every record holds "zebra"; ids repeat, so records are replaced, and some are deleted.
                let batch = (0..<4).map { _ in
                    Keyword.record("r\(generator.next() % 120)", "zebra " + Self.text(&generator))
                }
                try await sink.upsert(batch)
                if round % 10 == 9 { try await sink.delete([VectorID(rawValue: "r\(generator.next() % 120)")]) }
            }
        }
        var checks = 0
        while true {
            // Read once more after the writes end: the last state is checked too.
            let last = writes.isFinished
            try environment.read { txn in
                let index = KeywordIndex(environment: environment)
                guard try index.isBuilt(txn) else { return }
                let snapshot = try index.snapshot(txn)
                let postings = try index.postings(of: "zebra", in: snapshot, txn).list
                var ids = Set<[UInt8]>()
                for posting in postings {
                    let id = try #require(try index.id(of: posting.id, txn), "a posting without its record")
                    #expect(try txn.get(vectors, id) != nil, "a live number without its vector")
                    ids.insert(id)
                }
                #expect(ids.count == postings.count, "an id with two live postings")
                #expect(try txn.count(vectors) == postings.count, "a record without its postings")
                #expect(snapshot.corpus.documents == postings.count)
            }
            checks += 1
            if last { break }
            await Task.yield()
        }
        try await writes.value
        sink.settleKeywordMerges()
        #expect(checks > 1)
        #expect(try Self.segments(sink).count < 16)
    }
}

/// A task whose end can be asked about without waiting for it.
private final class WriteTask: Sendable {
    private final class Flag: Sendable {
        let done = Mutex(false)
    }

    private let flag = Flag()
    private let task: Task<Void, any Error>

    init(_ body: @escaping @Sendable () async throws -> Void) {
        let flag = self.flag
        task = Task {
            defer { flag.done.withLock { $0 = true } }
            try await body()
        }
    }

    var isFinished: Bool { flag.done.withLock { $0 } }
    var value: Void { get async throws { try await task.value } }
}
