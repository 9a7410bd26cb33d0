import ArgumentParser
import Foundation
import Logging
import Sluice
import SluiceCommandLine
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Process new and changed documents of the source (incremental; resumable after any interruption)."
    )

    @OptionGroup var options: PipelineOptions

    @Option(help: ArgumentHelp("Source folder (overrides the pipeline's source.path).", valueName: "path"))
    var source: String?

    @Flag(help: "Also delete the vectors of documents that vanished from the source (full sync).")
    var prune = false

    @Flag(help: "Show what would be added, changed, deleted and skipped, without embedding or writing anything.")
    var dryRun = false

    @Option(
        help: ArgumentHelp(
            "With --dry-run: the embedder's price in dollars per million tokens, to print what the run would cost.",
            valueName: "dollars"
        )
    )
    var tokenPrice: Double?

    func validate() throws {
        if let tokenPrice, !dryRun || !(tokenPrice >= 0) || !tokenPrice.isFinite {
            throw ValidationError(
                dryRun
                    ? "--token-price: a price of 0 or more dollars per million tokens"
                    : "--token-price goes with --dry-run"
            )
        }
    }

    @Flag(help: "Let --prune delete more than run.max_delete_fraction of the store.")
    var allowMassDelete = false

    @Flag(help: "Process only the documents whose last attempt failed.")
    var retryFailed = false

    @Flag(help: "Clear the sink and the checkpoint and embed everything again (required to change the embedder).")
    var reembed = false

    @Option(
        help: ArgumentHelp(
            "Own only the documents whose key hashes to shard K of N (0 ≤ K < N); each shard needs its own state directory, all may share one sink.",
            valueName: "K/N"
        )
    )
    var shard: String?

    @Option(
        help: ArgumentHelp(
            "Write the run's statistics as JSON to this file ('-' for standard output).",
            valueName: "file"
        )
    )
    var statsJson: String?

    @Option(
        help: ArgumentHelp(
            "Write the run's outcome and figures in the Prometheus text format to this file (node-exporter's textfile collector), replaced atomically, also when the run fails.",
            valueName: "file"
        )
    )
    var metricsFile: String?

    @Option(help: .hidden)  // `sluice serve`'s runs: see ProgressFileWriter.
    var progressJson: String?

    @Flag(
        help:
            "No progress and no info lines (notices, warnings and errors stay); the short summary instead of the table."
    )
    var quiet = false

    func run() async throws {
        guard let metricsFile else { return try await runPipeline() }
        var finished: RunStats?
        do {
            try await runPipeline { finished = $0 }
            try Self.writeMetrics(to: metricsFile, pipeline: options.pipeline, code: .success, stats: finished)
        } catch {
            let code: RunExitCode
            switch error {
            case let exit as ExitCode: code = RunExitCode(rawValue: exit.rawValue)
            default: code = RunExitCode(for: error)
            }
            try? Self.writeMetrics(to: metricsFile, pipeline: options.pipeline, code: code, stats: finished)
            throw error
        }
    }

    /// Writes the file next to itself, then renames it over the old one: the collector never reads half.
    static func writeMetrics(to path: String, pipeline: String, code: RunExitCode, stats: RunStats?) throws {
        let url = URL(fileURLWithPath: path)
        let previous = (try? String(contentsOf: url, encoding: .utf8)).flatMap(RunMetrics.lastSuccess(in:))
        let now = Date()
        let text = RunMetrics.text(
            pipeline: URL(fileURLWithPath: pipeline).deletingPathExtension().lastPathComponent,
            exitCode: code,
            stats: stats,
            endedAt: now,
            lastSuccess: code == .success ? now : previous
        )
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).tmp")
        try Data(text.utf8).write(to: temporary)
        guard rename(temporary.path, url.path) == 0 else {
            throw SluiceError(.io, "cannot replace \(path): \(String(cString: strerror(errno)))")
        }
    }

    private func runPipeline(finished: (RunStats) -> Void = { _ in }) async throws {
        try await withExitMapping {
            let logger = options.makeLogger(quiet: quiet)
            let shard = try self.shard.map(Shard.init(parsing:))
            // The pipeline file's settings, to find the state and the store (its notices are printed below).
            let base = try options.configurationLoader(source: source).file(extra: [])
            // A stats file that cannot be written is refused before the run, not after its work is done.
            if let statsJson { try OutputFile.check(statsJson, inputs: Self.readPaths(base)) }
            if let shard, !dryRun {
                // A shard's first run after `generation start` was run with another shard's state: it follows
                // the deployment's one manifest from now on (docs/GENERATIONS.md, "Sharded deployments").
                try await IndexGenerations.joinDeployment(configuration: base, shard: shard)
            }
            let generations = IndexGenerations(configuration: base)
            // A shard of a deployment with generations: no change is made while it runs (and its copy of a
            // manifest kept in the store is brought in line once it holds the lock).
            let deploymentLock = dryRun ? nil : try await generations.shardRunLock()
            defer { withExtendedLifetime(deploymentLock) {} }
            if dryRun { try await generations.followDeployment() }
            // One state: a new one follows the generations the store's copy of the manifest names.
            if shard == nil { try await generations.followStore() }
            // With a candidate generation, every run keeps both current: the active one first (what is served),
            // then the candidate, each with its own settings, store and document records (docs/GENERATIONS.md).
            let configuration = try options.loadConfiguration(source: source)
            // A dry run's estimate of the active generation's embedding, for the candidate's after it.
            var embedded = DryRunEmbedded()
            guard try generations.hasCandidate() else {
                try await runOne(configuration, logger: logger, embedded: &embedded, finished: finished)
                // A pgvector view or Qdrant alias follows the active generation once its table exists.
                return try await generations.publishActive()
            }
            if reembed {
                throw SluiceError(
                    .usage,
                    "--reembed rebuilds the active generation in place while a candidate exists: promote or drop the candidate first (docs/GENERATIONS.md)"
                )
            }
            let candidate = try options.loadConfiguration(source: source, generation: .candidate)
            // The shard's part of the candidate is incomplete until both runs below end.
            var partVersion: Int?
            if let shard, deploymentLock != nil { partVersion = try await generations.beginShardRun(shard: shard) }
            var code = RunExitCode.success
            do {
                try await runOne(configuration, logger: logger, embedded: &embedded, finished: finished)
            } catch let exit as ExitCode where exit.rawValue == RunExitCode.documentsFailed.rawValue {
                // Documents that failed are the source's: the candidate is still brought up to date.
                code = .documentsFailed
            }
            // A store without the deployment's lock (Chroma, Qdrant): a change made with another shard's state
            // meanwhile may have promoted or dropped the candidate; then it is left alone.
            let candidateID = candidate.generation ?? ""
            guard try await generations.candidateStillCurrent(candidateID, since: partVersion) else {
                logger.notice(
                    "candidate generation \(candidateID) was promoted, dropped or rolled back while this shard ran: not built by this run",
                    metadata: ["sluice-generation": "\(candidateID)"]
                )
                try await generations.publishActive()
                if code != .success { throw ExitCode(code) }
                return
            }
            logger.notice(
                "candidate generation \(candidate.generation ?? "?"): bringing it up to date",
                metadata: ["sluice-generation": "\(candidate.generation ?? "?")"]
            )
            try await runOne(candidate, logger: logger, primary: false, embedded: &embedded, finished: { _ in })
            if let shard, deploymentLock != nil {
                try await generations.endShardRun(shard: shard, version: partVersion)
            }
            try await generations.publishActive()
            if code != .success { throw ExitCode(code) }
        }
    }

    /// Runs the pipeline of one generation (or the index without generations) and maps its outcome. Only the
    /// `primary` one (the active generation) writes `--stats-json` and the progress file.
    private func runOne(
        _ configuration: PipelineConfiguration,
        logger: Logger,
        primary: Bool = true,
        embedded: inout DryRunEmbedded,
        finished: (RunStats) -> Void
    ) async throws {
        var runOptions = RunOptions()
        runOptions.prune = prune ? true : nil
        runOptions.retryFailed = retryFailed
        runOptions.allowMassDelete = allowMassDelete
        runOptions.reembed = reembed
        if let shard { runOptions.shard = try Shard(parsing: shard) }
        runOptions.embedAuditLog = ProcessInfo.processInfo.environment["SLUICE_EMBED_AUDIT_LOG"]
        let components = try PipelineComponents.standard(
            configuration: configuration,
            extractWorker: .sluiceWorker,
            logger: logger
        )
        let pipeline = Pipeline(
            configuration: configuration,
            components: components,
            options: runOptions,
            logger: logger
        )

        if dryRun {
            let report = try await pipeline.dryRun(after: embedded)
            if let cost = report.cost { embedded = cost.embedded }
            if let generation = configuration.generation { print("generation \(generation):") }
            print(DryRunPrinter.render(report, tokenPrice: tokenPrice))
            if let refusal = report.massDeleteRefusal {
                throw SluiceError(.massDelete, refusal)
            }
            return
        }

        let progress = ProgressReporter(quiet: quiet, logger: logger)
        let progressFile = primary ? progressJson.map(ProgressFileWriter.init(path:)) : nil
        // A run that stops on an error still writes its stats file (`stopped`, and the figures so far): a
        // previous run's file left in place would tell a monitor the last run went well.
        let reached = Mutex<RunStats?>(nil)
        let stats: RunStats
        do {
            // Under swift-service-lifecycle, as `sluice serve`: the first SIGINT/SIGTERM stops intake, what is
            // in flight finishes and is committed; a second exits 4 at once (BatchJob).
            stats = try await BatchJob.run(logger: logger) { shutdown in
                try await pipeline.run(
                    shutdown: shutdown,
                    progress: {
                        progress.report($0)
                        progressFile?.report($0)
                    },
                    stopped: { partial in reached.withLock { $0 = partial } }
                )
            }
        } catch {
            if primary, let statsJson, !(error is ExitCode) {
                var partial = reached.withLock { $0 } ?? RunStats()
                partial.stopped = RunStop(error)
                try? writeJSON(partial, to: statsJson)
            }
            throw error
        }
        progress.finish(with: stats)
        finished(stats)
        progressFile?.finish(with: stats)
        if primary, let statsJson { try writeJSON(stats, to: statsJson) }
        if let refusal = stats.providerRefusal {
            FileHandle.standardError.write(
                Data(
                    "sluice: stopped: \(DisplayEscaping.escaped(refusal))\nsluice: fix the quota or the key, then run again to resume (exit 5)\n"
                        .utf8
                )
            )
        }
        if let full = stats.diskFull {
            FileHandle.standardError.write(
                Data(
                    "sluice: stopped: \(DisplayEscaping.escaped(full))\nsluice: free space, then run again to resume (exit 6)\n"
                        .utf8
                )
            )
        }
        let code = stats.exitCode
        if code != .success { throw ExitCode(code) }
    }

    private func writeJSON(_ stats: RunStats, to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = try encoder.encode(stats)
        try OutputFile.open(path).write(contentsOf: path == "-" ? data + Data("\n".utf8) : data)
    }

    /// The folders a run writes and reads as its own: an output file is never put inside them.
    static func readPaths(_ configuration: PipelineConfiguration) -> [URL] {
        [configuration.resolve(configuration.sink.path), configuration.resolve(configuration.state)]
    }
}
