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

    /// The command's logger, in the chosen format. `quiet` (run --quiet) raises the default level to
    /// notice, so that only notices, warnings and errors are printed; an explicit `--log-level` wins.
    package func makeLogger(quiet: Bool = false) -> Logger {
        LogOutput.configure(format: logFormat)
        return SluiceCommandLine.makeLogger(level: logLevel ?? (quiet ? "notice" : "info"))
    }

    /// The configuration with overrides applied. Paths given on the command line are relative to the
    /// working directory.
    package func loadConfiguration(source: String? = nil) throws -> PipelineConfiguration {
        // Whatever logs while the configuration and the components are built uses the chosen format.
        LogOutput.configure(format: logFormat)
        let file = URL(fileURLWithPath: pipeline)
        guard FileManager.default.fileExists(atPath: file.path) else {
            throw SluiceError(
                .configuration,
                "pipeline file \(pipeline) not found (run from the repository root, or name a pipeline file)"
            )
        }
        var configuration = try PipelineConfiguration.load(file: file, overrides: overrides)
        if !configuration.notes.deprecations.isEmpty {
            let logger = makeLogger()
            for notice in configuration.notes.deprecations { logger.warning("\(notice)") }
        }
        let cwd = FileManager.default.currentDirectoryPath
        if let state { configuration.state = Self.absolute(state, cwd) }
        if let source { configuration.source.path = Self.absolute(source, cwd) }
        return configuration
    }

    /// A command-line path, resolved by the one rule of ``PipelineConfiguration/resolve(_:against:)``
    /// against the working directory.
    package static func absolute(_ path: String, _ cwd: String) -> String {
        PipelineConfiguration.resolve(path, against: URL(fileURLWithPath: cwd)).path
    }
}
