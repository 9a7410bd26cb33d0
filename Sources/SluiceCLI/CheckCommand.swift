import ArgumentParser
import Foundation
import Sluice
import SluiceCommandLine

/// `sluice check [PIPELINE]`: validates the pipeline file, then talks to every dependency and prints one
/// line per check, with its fix.
struct CheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract:
            "Validate the pipeline file, then check the embedder, the store, the source and the state (one line each, with its fix).",
        discussion: """
            The embedder embeds one short text (remote: one small authenticated request); the store is \
            connected to and its dimensions, metric and embedder compared with the pipeline's; the source \
            is listed; the state's lock is tried and its checkpoint read. Nothing is written but the lock file \
            and, with the local store, an empty store where there is none yet. Exit codes: \
            0 every check passed (a warning, such as readable files left out by source.include or a pgvector store without accent folding, included) · \
            1 a configuration error (the pipeline file, a key, a mismatch) · \
            3 a run holds the state's lock (as `run` exits then) · 6 a dependency is unavailable (retry later). \
            With --json the answer is JSON whatever happens, a pipeline file that does not read included.
            """
    )

    @OptionGroup var options: PipelineOptions

    @Option(help: ArgumentHelp("Source folder (overrides the pipeline's source.path).", valueName: "path"))
    var source: String?

    @Option(help: ArgumentHelp("Check as shard K of N (the state's recorded shard must match).", valueName: "K/N"))
    var shard: String?

    @Flag(help: "Print the checks as one JSON document (subject, outcome, detail, fix; and the exit code).")
    var json = false

    func run() async throws {
        try await withExitMapping {
            let logger = options.makeLogger()
            let configuration: PipelineConfiguration
            let generations: DependencyCheck?
            let coordination: DependencyCheck?
            do {
                // The active generation's settings, unless the manifest naming it cannot be read: that is
                // the `generations` line's failure, and the rest is checked with the pipeline file's.
                try await options.followGenerations(source: source)
                let base = try options.loadConfiguration(source: source, generation: nil)
                generations = IndexGenerations.check(base)
                coordination = await IndexGenerations.checkCoordination(base)
                configuration =
                    generations?.outcome == .failed
                    ? base
                    : try IndexGenerations.configuration(
                        .active,
                        base: base,
                        load: options.configurationLoader(source: source).file(extra:)
                    )
            } catch let error where json {
                // The pipeline file itself does not read: still one JSON document, for programs.
                let check = DependencyCheck(
                    "pipeline",
                    .failed,
                    "\((error as? SluiceError)?.description ?? "\(error)")",
                    fix: "correct the pipeline file (every key is in docs/CONFIGURATION.md)"
                )
                let code = RunExitCode(for: error)
                try Self.printJSON([check], code: code)
                throw ExitCode(code)
            }
            var runOptions = RunOptions()
            if let shard { runOptions.shard = try Shard(parsing: shard) }
            let components: PipelineComponents
            do {
                components = try PipelineComponents.standard(configuration: configuration)
            } catch {
                // The pipeline file reads, but an embedder or store cannot be set up from it (a missing
                // key variable, missing model files, a malformed URL).
                let code: RunExitCode =
                    RunExitCode(for: error) == .dependencyUnavailable ? .dependencyUnavailable : .usage
                let check = DependencyCheck(
                    "pipeline",
                    .failed,
                    "\((error as? SluiceError)?.description ?? "\(error)")",
                    fix: "correct the pipeline file or the environment"
                )
                if json { try Self.printJSON([check], code: code) } else { Self.print(check) }
                throw ExitCode(code)
            }
            let valid = DependencyCheck("pipeline", .ok, "\(options.pipeline): valid")
            if !json { Self.print(valid) }
            let pipeline = Pipeline(
                configuration: configuration,
                components: components,
                options: runOptions,
                logger: logger
            )
            let checks = await pipeline.check() + [generations, coordination].compactMap { $0 }
            let code = DependencyCheck.exitCode(of: checks)
            if json {
                try Self.printJSON([valid] + checks, code: code)
            } else {
                for check in checks { Self.print(check) }
            }
            if code != .success { throw ExitCode(code) }
        }
    }

    /// `{"checks": [{"subject": "store", "outcome": "ok", "detail": "…", "fix": …}, …], "exit_code": 0}`
    static func printJSON(_ checks: [DependencyCheck], code: RunExitCode) throws {
        try MachineReadable.print([
            "checks": checks.map { check in
                [
                    "subject": check.subject, "outcome": check.outcome.rawValue, "detail": check.detail,
                    "fix": check.fix ?? NSNull(),
                ] as [String: Any]
            },
            "exit_code": Int(code.rawValue),
        ])
    }

    /// `ok          store     qdrant:…: reachable, 12 vectors → fix: …`
    static func print(_ check: DependencyCheck) {
        let outcome = check.outcome.rawValue.padding(toLength: 12, withPad: " ", startingAt: 0)
        let subject = check.subject.padding(toLength: max(9, check.subject.count + 1), withPad: " ", startingAt: 0)
        var line = "\(outcome)\(subject)\(check.detail)"
        if let fix = check.fix { line += " → fix: \(fix)" }
        Swift.print(DisplayEscaping.escaped(line))
    }
}
