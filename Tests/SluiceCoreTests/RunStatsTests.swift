import Foundation
import Testing

@testable import SluiceCore

@Suite struct RunStatsTests {
    @Test func exitCodeFollowsOutcomes() {
        var stats = RunStats()
        #expect(stats.exitCode == .success)
        stats.documentsFailed = 1
        #expect(stats.exitCode == .documentsFailed)
        stats.interrupted = true
        #expect(stats.exitCode == .interrupted)
    }

    @Test func histogramQuantilesAreClose() {
        var histogram = LatencyHistogram()
        for i in 1...1000 { histogram.record(Double(i) / 1000) }
        #expect(abs(histogram.quantile(0.5) - 0.5) < 0.06)
        #expect(abs(histogram.quantile(0.99) - 0.99) < 0.1)
        #expect(histogram.count == 1000)
    }

    @Test func tableAndJSONCarryThePhases() throws {
        var stats = RunStats()
        var phase = PhaseStats(name: "extract", workers: 2)
        phase.itemsIn = 3
        phase.itemsOut = 3
        phase.latency.record(0.01)
        stats.phases = [phase]
        stats.documentsUpserted = 3
        stats.wallSeconds = 1
        #expect(stats.table().contains("extract"))
        #expect(stats.table().contains("3 upserted"))
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(stats)) as? [String: Any]
        #expect(json?["documents_upserted"] as? Int == 3)
        #expect((json?["phases"] as? [[String: Any]])?.first?["latency_p50_s"] != nil)
    }
}

@Suite struct PhaseStatsCodingTests {
    @Test func percentilesSurviveAJSONRoundTrip() throws {
        var phase = PhaseStats(name: "embed")
        for ms in 1...100 { phase.latency.record(Double(ms) / 1000) }
        let decoded = try JSONDecoder().decode(PhaseStats.self, from: JSONEncoder().encode(phase))
        #expect(decoded.latencyQuantile(0.5) == phase.latency.quantile(0.5))
        #expect(decoded.latencyQuantile(0.99) > 0.05)
    }
}

@Suite struct RunStatsSummaryTests {
    @Test("the short summary (run --quiet) is the counters under the table, without the phase rows")
    func summaryIsTheTableTail() {
        var stats = RunStats()
        stats.documentsUpserted = 3
        stats.documentsFailed = 1
        stats.failuresByCode = ["empty-document": 1]
        stats.phases = [PhaseStats(name: "extract", workers: 2)]
        let summary = stats.summary()
        #expect(summary.hasPrefix("documents: 3 upserted, 0 skipped, 1 failed\n"))
        #expect(summary.contains("failures: empty-document 1"))
        #expect(!summary.contains("extract"))
        #expect(stats.table().hasSuffix("\n\n" + summary))
    }

    @Test func aStoppedRunSaysWhyAndExitsWithItsErrorsCode() throws {
        var stats = RunStats()
        stats.documentsUpserted = 3
        #expect(try JSONSerialization.jsonObject(with: JSONEncoder().encode(stats)) as? [String: Any] != nil)
        #expect(!String(decoding: try JSONEncoder().encode(stats), as: UTF8.self).contains("stopped"))
        stats.stopped = RunStop(SluiceError(.dependencyUnavailable, "the store is down"))
        #expect(stats.exitCode == .dependencyUnavailable)
        let object = try #require(
            try JSONSerialization.jsonObject(with: JSONEncoder().encode(stats)) as? [String: Any]
        )
        let stopped = try #require(object["stopped"] as? [String: Any])
        #expect(stopped["exit_code"] as? Int == 6)
        #expect((stopped["reason"] as? String)?.contains("the store is down") == true)
        #expect(object["documents_upserted"] as? Int == 3)
        #expect(try JSONDecoder().decode(RunStats.self, from: JSONEncoder().encode(stats)) == stats)
    }
}
