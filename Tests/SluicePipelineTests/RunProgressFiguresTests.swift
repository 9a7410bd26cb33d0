import Foundation
import SluiceCore
import Testing

@testable import SluicePipeline

/// The figures of the progress line (docs/USAGE.md, Progress): total, done, percent, rate and ETA, from
/// given values (no clock).
@Suite struct RunProgressFiguresTests {
    static func progress(
        elapsed: Double,
        scanned: Int,
        upserted: Int,
        skipped: Int,
        failed: Int,
        total: Int?
    ) -> RunProgress {
        var stats = RunStats()
        stats.documentsUpserted = upserted
        stats.documentsSkipped = skipped
        stats.documentsFailed = failed
        stats.chunks = 120
        stats.chunksEmbedded = 80
        return RunProgress(elapsedSeconds: elapsed, scanned: scanned, stats: stats, inFlight: 3, total: total)
    }

    @Test("before the scan has counted the documents: what was scanned and done, and the rate; no percent or ETA")
    func beforeTheTotal() {
        let progress = Self.progress(elapsed: 10, scanned: 57, upserted: 30, skipped: 8, failed: 2, total: nil)
        #expect(progress.done == 40)
        #expect(progress.percent == nil && progress.etaSeconds == nil)
        #expect(
            progress.line
                == "10s  scanned 57  done 40  4.0 docs/s  (upserted 30, skipped 8, failed 2)  in flight 3  chunks 120  embedded 80"
        )
        let names = progress.fields.map(\.name)
        #expect(!names.contains("total") && !names.contains("percent") && !names.contains("eta_s"))
    }

    @Test("once counted: done of total, percent (rounded down), rate and ETA at the rate so far")
    func withTheTotal() {
        let progress = Self.progress(elapsed: 10, scanned: 100, upserted: 30, skipped: 8, failed: 2, total: 100)
        #expect(progress.percent == 40)
        #expect(progress.documentsPerSecond == 4)
        #expect(progress.etaSeconds == 15)
        #expect(
            progress.line
                == "10s  done 40/100 (40%)  4.0 docs/s  ETA 15s  (upserted 30, skipped 8, failed 2)  in flight 3  chunks 120  embedded 80"
        )
        let fields = Dictionary(uniqueKeysWithValues: progress.fields.map { ($0.name, $0.value) })
        #expect(
            fields["total"] == 100 && fields["done"] == 40 && fields["percent"] == 40 && fields["docs_per_s"] == 4
                && fields["eta_s"] == 15
        )

        let slow = Self.progress(elapsed: 3_000, scanned: 1_000, upserted: 399, skipped: 0, failed: 0, total: 1_000)
        #expect(slow.line.hasPrefix("50m00s  done 399/1000 (39%)  0.1 docs/s  ETA 1h15m"), "\(slow.line)")
        let nothingYet = Self.progress(elapsed: 2, scanned: 5, upserted: 0, skipped: 0, failed: 0, total: 5)
        #expect(nothingYet.etaSeconds == nil && nothingYet.line.contains("ETA -"))
    }

    @Test("a finished run's figures: everything taken is done; documents an interruption left count in the total")
    func finished() {
        var stats = RunStats()
        stats.wallSeconds = 4
        stats.documentsUpserted = 6
        stats.documentsSkipped = 2
        let done = RunProgress(finished: stats)
        #expect(done.total == 8 && done.done == 8 && done.percent == 100 && done.etaSeconds == 0)
        stats.documentsNotReached = 8
        let interrupted = RunProgress(finished: stats)
        #expect(interrupted.total == 16 && interrupted.percent == 50)
        let empty = RunProgress(finished: RunStats())
        #expect(empty.percent == 100 && empty.documentsPerSecond == 0)
    }
}

/// Where the progress total comes from: the counting walk first, the scan's own count once it is over.
@Suite struct ScanCounterTests {
    @Test("nil until counted; the count ahead, never below what was scanned; exact at the end of the walk")
    func total() {
        let counter = ScanCounter()
        #expect(counter.total == nil)
        counter.increment()
        #expect(counter.total == nil)
        counter.counted(10)
        #expect(counter.total == 10)
        for _ in 0..<11 { counter.increment() }
        #expect(counter.total == 12, "a file added after the counting walk")
        counter.complete()
        #expect(counter.total == 12)
    }
}
