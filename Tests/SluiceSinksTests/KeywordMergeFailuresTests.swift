import Foundation
import SluiceCore
import SluiceLMDB
import SluiceTesting
import Synchronization
import Testing

@testable import SluiceSinks

/// Keyword merges that fail: counted, their first reason of each kind kept for the run's log, bounded, and a
/// full map reported by the store's next write; searches stay right throughout.
@Suite struct KeywordMergeFailuresTests {
    typealias Keyword = LocalSinkKeywordTests

    static let ioError = SluiceError(.sinkFailed, "the local store at /s: mdb_put: Input/output error")

    @Test("the policy: counted, one reason per kind, stopped after three failed passes in a row, map full at once")
    func policy() {
        var failures = KeywordMergeFailures()
        #expect(failures.failed(Self.ioError) == .retryLater)
        failures.succeeded()
        #expect(failures.failed(SluiceError(.diskFull, "no space left on device")) == .retryLater)
        #expect(failures.failed(SluiceError(.sinkFailed, "another I/O error")) == .retryLater)
        #expect(failures.mayMerge)
        #expect(failures.failed(Self.ioError) == .stop)
        #expect(!failures.mayMerge)
        #expect(failures.report.count == 4)
        #expect(failures.report.stopped)
        #expect(
            failures.report.reasons == [
                "failed": Self.ioError.message, "disk-full": "no space left on device",
            ]
        )
        #expect(failures.takeFatal() == nil)

        var full = KeywordMergeFailures()
        let mapFull = SluiceError(.sinkFailed, "mdb_put: the LMDB map is full", cause: LMDBMapFull())
        #expect(full.failed(mapFull) == .fail)
        #expect(!full.mayMerge)
        #expect(full.report.reasons.keys.sorted() == ["map-full"])
        #expect(full.takeFatal()?.message.contains("the LMDB map is full") == true)
        #expect(full.takeFatal() == nil, "reported once")
    }

    @Test("a full map is told by LMDB's own error, not by its words")
    func mapFullIsRecognized() throws {
        let dir = Keyword.directory()
        defer { TemporaryDirectory.remove(dir) }
        let environment = try LMDBEnvironment(path: dir, mapSize: 1 << 16)
        let table = try environment.database("t")
        let error = #expect(throws: SluiceError.self) {
            for n in 0..<1000 {
                try environment.write { try $0.put(table, Array("k\(n)".utf8), [UInt8](repeating: 7, count: 512)) }
            }
        }
        #expect(error.map(LMDBMapFull.isCause(of:)) == true, "\(String(describing: error))")
        #expect(KeywordMergeFailures.kind(of: error!) == "map-full")
        #expect(!LMDBMapFull.isCause(of: Self.ioError))
    }

    /// Writes `count` batches of two records each, waiting for the merges after each.
    static func write(_ sink: LocalSink, batches: Range<Int>) async throws -> [VectorRecord] {
        var records: [VectorRecord] = []
        for n in batches {
            let batch = [
                Keyword.record("r\(n)a", "invoice total \(n % 3 == 0 ? "CHF" : "EUR")"),
                Keyword.record("r\(n)b", "refund shipping date \(n % 2 == 0 ? "tax" : "cent")"),
            ]
            try await sink.upsert(batch)
            sink.settleKeywordMerges()
            records += batch
        }
        return records
    }

    @Test("merges that fail with an I/O error are counted and bounded, and searches stay right")
    func failingMergesAreCountedAndBounded() async throws {
        let dir = Keyword.directory()
        defer { TemporaryDirectory.remove(dir) }
        let sink = try LocalSink(directory: dir)
        #expect(sink.upkeepFailures == SinkUpkeepFailures())
        let passes = Mutex(0)
        sink.keywordMerger.fault.withLock {
            $0 = {
                passes.withLock { $0 += 1 }
                throw Self.ioError
            }
        }
        var records = try await Self.write(sink, batches: 0..<2)
        #expect(sink.upkeepFailures.count == 2)
        #expect(sink.upkeepFailures.reasons == ["failed": Self.ioError.message])
        #expect(!sink.upkeepFailures.stopped)
        // A third failed pass in a row stops the merges: later writes try no more.
        records += try await Self.write(sink, batches: 2..<8)
        #expect(sink.upkeepFailures.count == KeywordMergeFailures.maxConsecutive)
        #expect(sink.upkeepFailures.stopped)
        #expect(passes.withLock { $0 } == KeywordMergeFailures.maxConsecutive, "no pass after the merges stopped")
        // Unmerged, the segments pile up, and searches read them all.
        let environment = sink.environment
        let segments = try environment.read { try KeywordIndex(environment: environment).load($0).segments }
        #expect(segments.count == 8)
        for query in ["invoice total", "refund CHF", "shipping date cent", "EUR tax"] {
            try await Keyword.expectSameRanking(sink, query, records)
        }
        try await sink.finish()  // not fatal: the run ends as it would have
    }

    @Test("a merge that meets a full map fails the store's next write with the map's error")
    func aFullMapFailsTheNextWrite() async throws {
        let dir = Keyword.directory()
        defer { TemporaryDirectory.remove(dir) }
        let sink = try LocalSink(directory: dir)
        let records = try await Self.write(sink, batches: 0..<1)
        sink.keywordMerger.fault.withLock {
            $0 = { throw SluiceError(.sinkFailed, "mdb_put: the LMDB map is full", cause: LMDBMapFull()) }
        }
        _ = try await Self.write(sink, batches: 1..<2)
        #expect(sink.upkeepFailures.stopped)
        #expect(sink.upkeepFailures.reasons.keys.sorted() == ["map-full"])
        let error = await #expect(throws: SluiceError.self) {
            try await sink.upsert([Keyword.record("late", "invoice")])
        }
        #expect(error?.code == .sinkFailed)
        #expect(error?.message.contains("a keyword merge failed: mdb_put: the LMDB map is full") == true)
        #expect(try await sink.count() == records.count + 2, "the write that reported it wrote nothing")
        try await Keyword.expectSameRanking(sink, "invoice total", try await Self.all(sink))
    }

    static func all(_ sink: LocalSink) async throws -> [VectorRecord] {
        let records = Mutex<[VectorRecord]>([])
        try await sink.exportAll { record in records.withLock { $0.append(record) } }
        return records.withLock { $0 }.sorted { $0.id.rawValue < $1.id.rawValue }
    }
}
