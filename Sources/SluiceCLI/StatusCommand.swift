import ArgumentParser
import Foundation
import Sluice

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Documents by status, the last runs, and failures with their reasons.")

    @OptionGroup var options: PipelineOptions

    @Option(help: "How many recent runs to list.")
    var runs = 5

    func run() async throws {
        try await withExitMapping {
            let configuration = try options.loadConfiguration()
            let stateURL = configuration.resolve(configuration.state)
            let checkpoint = try CheckpointStore(directory: stateURL, readOnly: true)
            var counts: [String: Int] = [:]
            var failures: [DocumentRecord] = []
            var vectors = 0
            try checkpoint.forEachDocument { record in
                counts[record.status.rawValue, default: 0] += 1
                vectors += record.chunkIDs.count
                if record.status == .failed { failures.append(record) }
            }
            print("state: \(DisplayEscaping.escaped(stateURL.path))")
            print("embedder: \(try checkpoint.metadata("embedder") ?? "none yet")")
            if let reset = try checkpoint.pendingSinkReset() {
                print("sink: a clearing (\(reset)) was interrupted; the next run completes it before loading everything again")
            }
            print("documents: " + (counts.isEmpty ? "none" : counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")) + " · vectors tracked: \(vectors) · embedding cache: \(try checkpoint.cacheCount())")
            let extractions = try checkpoint.extractionCacheUsage()
            let cap = configuration.extract.cacheMB == 0 ? "off: extract.cache_mb is 0" : "cap \(String(format: "%g", configuration.extract.cacheMB)) MB, extract.cache_mb"
            print("extraction cache: \(extractions.entries) entries, \(String(format: "%.1f", Double(extractions.bytes) / 1_048_576)) MB (\(cap))")
            let recent = try checkpoint.recentRuns(limit: runs)
            if !recent.isEmpty {
                print("\nlast runs:")
                for run in recent {
                    let started = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: run.startedAt))
                    if let stats = run.stats {
                        print("  \(run.runID)  \(started)  exit \(run.exitCode.map(String.init) ?? "-")  \(stats.documentsUpserted) upserted, \(stats.documentsSkipped) skipped, \(stats.documentsFailed) failed\(stats.interrupted ? ", interrupted" : "")  \(String(format: "%.1f", stats.wallSeconds)) s\(run.failure.map { "  (\($0))" } ?? "")")
                    } else if let failure = run.failure {
                        print("  \(run.runID)  \(started)  exit \(run.exitCode.map(String.init) ?? "-")  stopped: \(failure)")
                    } else {
                        print("  \(run.runID)  \(started)  did not finish (crashed or still running)")
                    }
                }
            }
            if !failures.isEmpty {
                print("\nfailures (retried on the next run, or with `sluice run --retry-failed`):")
                for record in failures {
                    let removed = record.removedVectors.map { " (changed, and its \($0) old vectors were removed from the sink)" } ?? ""
                    let reason = record.error.map { "\($0.code): \($0.message)" } ?? "unknown"
                    print(DisplayEscaping.escaped("  \(record.key): \(reason)\(removed)"))
                }
            }
        }
    }
}
