import ArgumentParser
import Foundation
import Sluice
import SluiceCommandLine

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Documents by status, the last runs, and failures with their reasons."
    )

    @OptionGroup var options: PipelineOptions

    @Option(help: "How many recent runs to list.")
    var runs = 5

    @Flag(help: "Print one JSON document (snake_case keys, as --stats-json) instead of text.")
    var json = false

    func run() async throws {
        try await withExitMapping {
            try await options.followGenerations()
            let configuration = try options.loadConfiguration()
            let report = try Pipeline.status(configuration: configuration, recentRuns: runs)
            // The local store's index, from the store (the state does not know it).
            let storeDetails = await Pipeline.localStoreDetails(configuration: configuration)
            let storeIndex = storeDetails.flatMap(Pipeline.storeIndex)
            // How this process's reads fault in its map (a search here would fault the same way).
            let storeMap = storeDetails.flatMap(Pipeline.storeMap)
            if json {
                var document = MachineReadable.status(report, extractionCacheCapMB: configuration.extract.cacheMB)
                document["store_index"] = storeIndex ?? NSNull()
                document["store_map"] = storeMap ?? NSNull()
                try MachineReadable.print(document)
                return
            }
            print("state: \(DisplayEscaping.escaped(report.stateDirectory.path))")
            if !report.hasCheckpoint {
                // A reader's state (docs/OPERATIONS.md): what it follows is the store's, below.
                print("checkpoint: none (no run has loaded with this state: a reader's, which follows the store)")
            } else {
                print("embedder: \(report.embedder ?? "none yet")")
            }
            if let line = storeIndex.flatMap(Pipeline.indexSummary) { print("store: \(line)") }
            if let line = storeMap.flatMap(Pipeline.storeMapSummary) { print("store map: \(line)") }
            // With generations, what follows is the active one's; each is summed up here.
            let generations = try await IndexGenerations(configuration: configuration).report()
            if !generations.all.isEmpty {
                print("generations (docs/GENERATIONS.md; the lines below are the active one's):")
                for generation in generations.all { print("  " + GenerationCommand.Status.line(generation)) }
                if let line = generations.comparison?.statusLine { print("  " + DisplayEscaping.escaped(line)) }
            }
            if let reset = report.pendingSinkReset {
                print(
                    "sink: a clearing (\(reset)) was interrupted; the next run completes it before loading everything again"
                )
            }
            guard report.hasCheckpoint else { return }
            let counts = report.documentsByStatus
            print(
                "documents: "
                    + (counts.isEmpty
                        ? "none"
                        : counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", "))
                    + " · vectors tracked: \(report.vectorsTracked) · embedding cache: \(report.embeddingCacheEntries)"
            )
            let cap =
                configuration.extract.cacheMB == 0
                ? "off: extract.cache_mb is 0"
                : "cap \(String(format: "%g", configuration.extract.cacheMB)) MB, extract.cache_mb"
            print(
                "extraction cache: \(report.extractionCacheEntries) entries, \(String(format: "%.1f", Double(report.extractionCacheBytes) / 1_048_576)) MB (\(cap))"
            )
            let recent = report.recentRuns
            if !recent.isEmpty {
                print("\nlast runs:")
                for run in recent {
                    let started = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: run.startedAt))
                    if let stats = run.stats {
                        print(
                            "  \(run.runID)  \(started)  exit \(run.exitCode.map(String.init) ?? "-")  \(stats.documentsUpserted) upserted, \(stats.documentsSkipped) skipped, \(stats.documentsFailed) failed\(stats.interrupted ? ", interrupted" : "")  \(String(format: "%.1f", stats.wallSeconds)) s\(stats.ocrSummary.map { "  \($0)" } ?? "")\(stats.upkeepFailures.map { "  store upkeep: \($0.count) failed" } ?? "")\(run.failure.map { "  (\($0))" } ?? "")"
                        )
                    } else if let failure = run.failure {
                        print(
                            "  \(run.runID)  \(started)  exit \(run.exitCode.map(String.init) ?? "-")  stopped: \(failure)"
                        )
                    } else {
                        print("  \(run.runID)  \(started)  did not finish (crashed or still running)")
                    }
                }
            }
            if !report.failures.isEmpty {
                // Retried failures first, then the known ones (docs/DESIGN.md §11), each marked.
                let known = report.failures.filter { $0.knownFailure != nil }
                print(
                    "\nfailures (retried on the next run, or with `sluice run --retry-failed`; \(known.count) known: not retried until the file or the settings change):"
                )
                for record in report.failures.filter({ $0.knownFailure == nil }) + known {
                    let removed =
                        record.removedVectors.map { " (changed, and its \($0) old vectors were removed from the sink)" }
                        ?? ""
                    let reason = record.error.map { "\($0.code): \($0.message)" } ?? "unknown"
                    let mark = record.knownFailure == nil ? "" : " [known]"
                    print(DisplayEscaping.escaped("  \(record.key): \(reason)\(removed)\(mark)"))
                }
            }
        }
    }
}
