import Foundation
import SluiceCore
import Testing

/// Run records are kept in the state across versions: a record that does not decode is taken for damage
/// (`CheckpointStore.recentRuns` throws `state-corrupt`), which is right only while every record an earlier
/// version wrote still decodes. This keeps the oldest format.
struct RunRecordFormatTests {
    /// A run record as the first checkpoint (ff9c545, 2026-11-21) wrote it: no `failure`, and stats without
    /// the fields added since (known failures, files left out, extractions shared and cached, provider
    /// refusal, disk full, a phase's CPU time).
    static let firstFormat = """
        {"runID":"1763730000-1","startedAt":1763730000.5,"endedAt":1763730042.25,"configurationHash":"c1:ab12",
         "exitCode":0,"stats":{"run_id":"1763730000-1","started_at":1763730000.5,"wall_s":41.75,
         "phases":[{"name":"extract","items_in":3,"items_out":3,"bytes":1200,"busy_s":0.5,"starved_s":0.1,
         "blocked_s":0,"workers":2,"latency_p50_s":0.01,"latency_p95_s":0.02,"latency_p99_s":0.03,
         "latency_max_s":0.04}],
         "documents_upserted":3,"documents_skipped":0,"documents_failed":0,"documents_not_reached":0,
         "documents_pruned":0,"chunks":7,"chunks_embedded":7,"tokens_embedded":900,"embed_requests":1,
         "embed_retries":0,"rate_limited":0,"cache_hits":0,"vectors_upserted":7,"vectors_deleted":0,
         "bytes_read":1200,"interrupted":false,"max_documents_in_flight":3,"failures_by_code":{}}}
        """

    @Test("a run record of the first checkpoint format decodes with today's type")
    func firstFormatDecodes() throws {
        let record = try JSONDecoder().decode(RunRecord.self, from: Data(Self.firstFormat.utf8))
        #expect(record.runID == "1763730000-1" && record.exitCode == 0 && record.failure == nil)
        #expect(record.stats?.documentsUpserted == 3 && record.stats?.phases.first?.name == "extract")
        #expect(record.stats?.extractionsCached == nil && record.stats?.phases.first?.cpuSeconds == nil)
    }

    @Test("a record written today decodes, and a newer version's extra keys are ignored")
    func roundTripAndUnknownKeys() throws {
        var stats = RunStats()
        stats.documentsUpserted = 2
        stats.diskFull = "the state's disk"
        var record = RunRecord(runID: "r", startedAt: 1, configurationHash: "c1:x", exitCode: 6, stats: stats)
        record.failure = "disk-full: no space"
        let data = try JSONEncoder().encode(record)
        #expect(try JSONDecoder().decode(RunRecord.self, from: data) == record)
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        object["aFieldOfALaterVersion"] = ["nested": true]
        let later = try JSONSerialization.data(withJSONObject: object)
        #expect(try JSONDecoder().decode(RunRecord.self, from: later) == record)
    }
}
