import ArgumentParser
import Foundation
import Logging
import Sluice

/// Options every command shares: the pipeline file, the state folder and `--set` overrides.
package struct PipelineOptions: ParsableArguments {
    package static let defaultPipeline = "Pipelines/default.yaml"

    package init() {}

    @Argument(help: "The pipeline file (YAML).")
    package var pipeline: String = PipelineOptions.defaultPipeline

    @Option(name: .long, help: ArgumentHelp("Checkpoint folder (overrides the pipeline's `state`).", valueName: "dir"))
    package var state: String?

    @Option(
        name: .customLong("set"),
        help: ArgumentHelp(
            "Override a pipeline setting, e.g. --set chunk.max_tokens=128 (repeatable).",
            valueName: "key=value"
        )
    )
    package var overrides: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Log level: trace, debug, info, notice, warning, error (default info; notice with run --quiet).",
            valueName: "level"
        )
    )
    package var logLevel: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Log lines on standard error: text, or json (one JSON object per line, for log shippers).",
            valueName: "format"
        )
    )
    package var logFormat: LogFormat = .text

    /// A `--log-level` that names no level is refused (exit 1), not read as `info`.
    package func validate() throws {
        if let logLevel, !logLevelNames.contains(logLevel.lowercased()) {
            throw ValidationError(
                "--log-level: '\(logLevel)' is not a level (\(logLevelNames.joined(separator: ", ")))"
            )
        }
    }

    /// The command's logger, in the chosen format. `quiet` (run --quiet) raises the default level to
    /// notice, so that only notices, warnings and errors are printed; an explicit `--log-level` wins.
    package func makeLogger(quiet: Bool = false) -> Logger {
        LogOutput.configure(format: logFormat)
        return SluiceCommandLine.makeLogger(level: logLevel ?? (quiet ? "notice" : "info"))
    }

    /// The configuration with overrides applied, for the index generation `generation` names (the active
    /// one, as every reader uses: docs/GENERATIONS.md; nil: the pipeline file's, whatever generation is
    /// active). Paths given on the command line are relative to the working directory.
    package func loadConfiguration(
        source: String? = nil,
        generation: IndexGenerations.Role? = .active
    ) throws -> PipelineConfiguration {
        // Whatever logs while the configuration and the components are built uses the chosen format.
        LogOutput.configure(format: logFormat)
        let loader = configurationLoader(source: source)
        let base = try loader.file(extra: [])
        if !base.notes.deprecations.isEmpty {
            let logger = makeLogger()
            for notice in base.notes.deprecations { logger.warning("\(notice)") }
        }
        guard let generation else { return base }
        return try IndexGenerations.configuration(generation, base: base, load: loader.file(extra:))
    }

    /// Brings a shard's copy of its deployment's generation manifest in line with the one its store keeps (a
    /// promote made with another shard's state, on another machine: docs/GENERATIONS.md, "Sharded
    /// deployments"), before ``loadConfiguration(source:generation:)`` reads it. Nothing for a state that is
    /// not a shard's of a deployment in a store behind a server.
    package func followGenerations(source: String? = nil) async throws {
        try await IndexGenerations(configuration: try configurationLoader(source: source).file(extra: []))
            .followDeployment()
    }

    /// What ``loadConfiguration(source:generation:)`` reads, as a value that can load it again later (`sluice
    /// serve` does when the active generation changes).
    package func configurationLoader(source: String? = nil) -> ConfigurationLoader {
        let cwd = FileManager.default.currentDirectoryPath
        return ConfigurationLoader(
            pipeline: pipeline,
            state: state.map { Self.absolute($0, cwd) },
            source: source.map { Self.absolute($0, cwd) },
            overrides: overrides
        )
    }

    /// A command-line path, resolved by the one rule of ``PipelineConfiguration/resolve(_:against:)``
    /// against the working directory.
    package static func absolute(_ path: String, _ cwd: String) -> String {
        PipelineConfiguration.resolve(path, against: URL(fileURLWithPath: cwd)).path
    }
}
