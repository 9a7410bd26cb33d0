import Foundation
import SluiceCore

/// A run's figures in the Prometheus text format, for node-exporter's textfile collector
/// (`sluice run --metrics-file`): gauges of the last run, labelled with the pipeline, so that an alert can
/// ask "did the last run succeed, and when did one last succeed?".
package enum RunMetrics {
    /// The exposition of one finished (or failed) run. `stats` is nil when the run stopped before its
    /// documents (a configuration error, an unavailable store): only the outcome is written then.
    /// - Parameters:
    ///   - lastSuccess: When a run of this pipeline last exited 0 (kept across runs from the previous file).
    package static func text(
        pipeline: String,
        exitCode: RunExitCode,
        stats: RunStats?,
        endedAt: Date,
        lastSuccess: Date?
    ) -> String {
        var out = ""
        let label = "pipeline=\"\(escape(pipeline))\""
        func gauge(_ name: String, _ help: String, _ samples: [(labels: String, value: Double)]) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) gauge\n"
            for sample in samples {
                let labels = sample.labels.isEmpty ? label : "\(label),\(sample.labels)"
                out += "\(name){\(labels)} \(format(sample.value))\n"
            }
        }
        gauge(
            "sluice_run_exit_code",
            "Exit code of the last run (docs/OPERATIONS.md).",
            [("", Double(exitCode.rawValue))]
        )
        gauge("sluice_run_end_timestamp_seconds", "When the last run ended.", [("", endedAt.timeIntervalSince1970)])
        if let lastSuccess {
            gauge(
                "sluice_run_last_success_timestamp_seconds",
                "When a run last exited 0.",
                [("", lastSuccess.timeIntervalSince1970)]
            )
        }
        guard let stats else { return out }
        gauge("sluice_run_duration_seconds", "Wall time of the last run.", [("", stats.wallSeconds)])
        gauge(
            "sluice_run_documents",
            "Documents of the last run by outcome (known_failure is part of skipped).",
            [
                ("outcome=\"upserted\"", Double(stats.documentsUpserted)),
                ("outcome=\"skipped\"", Double(stats.documentsSkipped)),
                ("outcome=\"failed\"", Double(stats.documentsFailed)),
                ("outcome=\"known_failure\"", Double(stats.documentsKnownFailures ?? 0)),
                ("outcome=\"not_reached\"", Double(stats.documentsNotReached)),
                ("outcome=\"pruned\"", Double(stats.documentsPruned)),
            ]
        )
        gauge(
            "sluice_run_failures",
            "Documents that failed in the last run, by error code.",
            stats.failuresByCode.keys.sorted().map { ("code=\"\(escape($0))\"", Double(stats.failuresByCode[$0]!)) }
        )
        let counters: [(String, String, Int)] = [
            ("sluice_run_chunks", "Chunks of the documents processed.", stats.chunks),
            ("sluice_run_chunks_embedded", "Chunks sent to the embedder.", stats.chunksEmbedded),
            ("sluice_run_tokens_embedded", "Tokens sent to the embedder.", stats.tokensEmbedded),
            ("sluice_run_embed_requests", "Requests to the embedder.", stats.embedRequests),
            ("sluice_run_embed_retries", "Retried embedder requests.", stats.embedRetries),
            ("sluice_run_rate_limited", "429 answers from the embedder.", stats.rateLimited),
            ("sluice_run_cache_hits", "Chunks whose vectors came from the embedding cache.", stats.cacheHits),
            ("sluice_run_vectors_upserted", "Vectors written to the store.", stats.vectorsUpserted),
            ("sluice_run_vectors_deleted", "Vectors deleted from the store.", stats.vectorsDeleted),
            ("sluice_run_bytes_read", "Bytes of documents read.", stats.bytesRead),
            ("sluice_run_files_left_out", "Files source.include/exclude did not select.", stats.filesLeftOut ?? 0),
            (
                "sluice_run_store_upkeep_failures", "Store upkeep passes (keyword merges) that failed.",
                stats.upkeepFailures?.count ?? 0
            ),
        ]
        for (name, help, value) in counters { gauge(name, help, [("", Double(value))]) }
        gauge(
            "sluice_run_phase_busy_seconds",
            "Time each phase's workers spent working in the last run.",
            stats.phases.map { ("phase=\"\(escape($0.name))\"", $0.busySeconds) }
        )
        return out
    }

    /// The last `sluice_run_last_success_timestamp_seconds` in a previous file, if any.
    package static func lastSuccess(in text: String) -> Date? {
        for line in text.split(separator: "\n") where line.hasPrefix("sluice_run_last_success_timestamp_seconds{") {
            if let value = line.split(separator: " ").last.flatMap({ Double($0) }) {
                return Date(timeIntervalSince1970: value)
            }
        }
        return nil
    }

    private static func escape(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    private static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
