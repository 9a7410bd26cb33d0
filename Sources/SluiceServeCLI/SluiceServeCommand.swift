import ArgumentParser
import Foundation
import Sluice
import SluiceCommandLine
import SluiceEmbed
import SluiceServe

#if canImport(Glibc)
import Glibc
#endif

/// `sluice-serve`: the HTTP service, an executable of its own so that `sluice` (the README's first command)
/// is built without the server's dependency graph (swift-nio, Hummingbird: docs/INSTALL.md). `sluice serve`
/// runs it when it is installed beside `sluice`; it starts its runs with that `sluice`.
@main
struct SluiceServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sluice-serve",
        abstract: "Serve the pipeline's index over HTTP: search, documents, runs, health, metrics (docs/SERVE.md).",
        discussion: ServeOptions.discussion,
        version: SluiceVersion.current
    )

    @OptionGroup var serve: ServeOptions

    func run() async throws {
        try await withExitMapping {
            let options = serve.options
            let logger = options.makeLogger()
            try await options.followGenerations()
            var configuration = try options.loadConfiguration()
            if let host = serve.host { configuration.serve.host = host }
            if let port = serve.port {
                guard (0...65_535).contains(port) else { throw SluiceError(.usage, "--port: from 0 to 65535") }
                configuration.serve.port = port
            }
            let sluice = try Self.sluiceBeside()
            // Searches use the store read-only, with the embedder loaded once; a run is a child `sluice run`
            // of the same pipeline file, state and overrides (docs/SERVE.md, "Runs").
            // A new deployment serves before its first run: the store's descriptor creates it empty where it
            // must exist to be read (the local store, as `check` does).
            try SinkFactory.createIfMissing(configuration)
            let components = try PipelineComponents.standard(configuration: configuration, readOnlySink: true)
            var runArguments = ["run", options.pipeline, "--quiet", "--log-format", options.logFormat.rawValue]
            runArguments += ["--state", configuration.resolve(configuration.state).path]
            for override in options.overrides { runArguments += ["--set", override] }
            if let level = options.logLevel { runArguments += ["--log-level", level] }
            // A promote or a rollback (docs/GENERATIONS.md): the active generation is loaded again, as at start.
            let loader = options.configurationLoader()
            let server = try SluiceServer(
                configuration: configuration,
                components: components,
                runCommand: (sluice, runArguments),
                reload: {
                    let configuration = try loader.configuration(.active)
                    return (
                        configuration, try PipelineComponents.standard(configuration: configuration, readOnlySink: true)
                    )
                },
                logger: logger
            )
            let host = configuration.serve.host
            let code = try await server.run { port in
                // Tests and scripts wait for this line (port 0 picks a free port).
                FileHandle.standardOutput.write(Data("listening on http://\(host):\(port)\n".utf8))
            }
            if code != .success { throw ExitCode(code) }
        }
    }

    /// The `sluice` installed beside this executable (by its real path, so that `ps` names it), which runs
    /// the server's runs: both are products of the same build.
    static func sluiceBeside() throws -> String {
        guard let resolved = realpath("/proc/self/exe", nil) else {
            throw SluiceError(.configuration, "sluice-serve: cannot find its own executable (/proc/self/exe)")
        }
        defer { free(resolved) }
        let path = URL(fileURLWithPath: String(cString: resolved)).deletingLastPathComponent()
            .appendingPathComponent("sluice").path
        guard access(path, X_OK) == 0 else {
            throw SluiceError(
                .configuration,
                "sluice-serve starts its runs with the sluice beside it, and there is none at \(path) "
                    + "(install both from the same build: docs/INSTALL.md)"
            )
        }
        return path
    }
}

extension SluiceServeCommand {
    /// Parses and runs, mapping argument errors to exit code 1 (docs/DESIGN.md §7), as `sluice` does.
    static func main() async {
        // OpenBLAS's kernels for this CPU where its own detection falls back to generic ones (may re-execute):
        // the server embeds every query.
        OpenBLASCore.reexecuteIfUnrecognized()
        // Its threads would spin on the other cores for ~0.1 s; BLAS runs on one thread here.
        OpenBLASCore.stopThreadPool()
        ResidentMemoryReleaser.useFixedMmapThreshold()
        await parseAndRun()
    }
}
