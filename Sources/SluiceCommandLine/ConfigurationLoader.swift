import Foundation
import Sluice

/// The pipeline file, the command line's `--state`, `--source` and `--set`: what a command's configuration
/// is loaded from, kept so that it can be loaded again (for another index generation, or when `sluice serve`
/// follows a promote).
package struct ConfigurationLoader: Sendable {
    package var pipeline: String
    /// Absolute, or nil (the pipeline's `state`).
    package var state: String?
    /// Absolute, or nil (the pipeline's `source.path`).
    package var source: String?
    package var overrides: [String]

    /// The pipeline file with `extra` overrides (a generation's), then the command line's.
    package func file(extra: [String]) throws -> PipelineConfiguration {
        let file = URL(fileURLWithPath: pipeline)
        guard FileManager.default.fileExists(atPath: file.path) else {
            throw SluiceError(
                .configuration,
                "pipeline file \(pipeline) not found (run from the repository root, or name a pipeline file)"
            )
        }
        var configuration = try PipelineConfiguration.load(file: file, overrides: extra + overrides)
        if let state { configuration.state = state }
        if let source {
            // `--source` names a folder; a remote source's location is its own settings'. Ignored, it would
            // read the pipeline file's bucket or site while the user meant another.
            guard configuration.source.kind == .folder else {
                throw SluiceError(
                    .usage,
                    "--source names a folder, but this pipeline's source.kind is \(configuration.source.kind): set the source's own settings instead (source.\(configuration.source.kind).…, with --set or in the pipeline file; docs/SOURCES.md)"
                )
            }
            configuration.source.path = source
        }
        return configuration
    }

    /// The settings of the generation `role` names (``IndexGenerations/configuration(_:base:load:)``).
    package func configuration(_ role: IndexGenerations.Role) throws -> PipelineConfiguration {
        try IndexGenerations.configuration(role, base: try file(extra: []), load: file(extra:))
    }
}
