import Foundation
import Testing

@testable import SluiceCore

/// ``WorkCPU``: the CPU time of a stage's work, on the threads that ran it, without the waits.
@Suite struct WorkCPUTests {
    /// Spins for about `seconds` of CPU time on the calling thread.
    static func spin(_ seconds: Double) {
        let end = WorkCPU.threadNanoseconds() + Int(seconds * 1e9)
        var x: UInt64 = 1
        while WorkCPU.threadNanoseconds() < end { x = x &* 6_364_136_223_846_793_005 &+ 1 }
        #expect(x != 0)
    }

    @Test func measureAddsTheCallersCPUTimeToTheCurrentMeter() {
        let meter = WorkCPU()
        WorkCPU.$current.withValue(meter) { WorkCPU.measure { Self.spin(0.05) } }
        #expect(meter.seconds >= 0.05)
        // Without a meter nothing is measured, and the result comes back either way.
        #expect(WorkCPU.measure { 7 } == 7)
    }

    @Test func executorWorkCountsItsCPUTimeButNotItsWaits() async throws {
        let executor = BlockingExecutor(label: "sl-test", threads: 1)
        defer { executor.shutdown() }
        let meter = WorkCPU()
        let clock = ContinuousClock()
        let start = clock.now
        try await WorkCPU.$current.withValue(meter) {
            // Waits: sleeping on the pool thread, and queueing behind another job for its one thread.
            async let other: Void = executor.run { Thread.sleep(forTimeInterval: 0.2) }
            try await executor.run { Thread.sleep(forTimeInterval: 0.2) }
            try await executor.run { Self.spin(0.05) }
            try await other
        }
        let wall = start.duration(to: clock.now) / .seconds(1)
        #expect(wall >= 0.4)
        #expect(meter.seconds >= 0.05)
        #expect(meter.seconds < 0.2, "sleeping and queueing are not CPU time: \(meter.seconds) s")
    }

    @Test func thePhaseTableShowsCPUTimeWhereMeasured() throws {
        var stats = RunStats()
        var extract = PhaseStats(name: "extract", workers: 2)
        extract.busySeconds = 8.25
        extract.cpuSeconds = 3.5
        stats.phases = [extract, PhaseStats(name: "embed", workers: 2)]
        let lines = stats.table().split(separator: "\n")
        #expect(lines[0].contains("busy s") && lines[0].contains("cpu s"))
        let extractRow = lines.first { $0.hasPrefix("extract") }.map { $0.split(separator: " ") }
        #expect(extractRow?[5] == "8.25" && extractRow?[6] == "3.50")
        let embedRow = lines.first { $0.hasPrefix("embed") }.map { $0.split(separator: " ") }
        #expect(embedRow?[6] == "-")
    }

    @Test func cpuTimeSurvivesJSONAndOlderRecordsHaveNone() throws {
        var phase = PhaseStats(name: "chunk")
        phase.cpuSeconds = 1.25
        var merged = phase
        merged.merge(phase)
        #expect(merged.cpuSeconds == 2.5)
        let decoded = try JSONDecoder().decode(PhaseStats.self, from: JSONEncoder().encode(phase))
        #expect(decoded.cpuSeconds == 1.25)
        let old =
            #"{"name":"chunk","items_in":1,"items_out":1,"bytes":0,"busy_s":1,"starved_s":0,"blocked_s":0,"workers":1}"#
        #expect(try JSONDecoder().decode(PhaseStats.self, from: Data(old.utf8)).cpuSeconds == nil)
    }
}
