import ArgumentParser
import Foundation
import Sluice
import SluiceServe

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the pipeline's index over HTTP: search, documents, runs, health, metrics (docs/SERVE.md).",
        discussion: """
            Binds serve.host:serve.port (default 127.0.0.1:8080); any address but loopback (127.0.0.0/8, \
            ::1, localhost) needs a bearer token (serve.api_key_env). On loopback it answers only its own \
            Host names and JSON bodies, so web pages cannot use it (docs/SERVE.md, "Browsers"). Prints \
            "listening on http://HOST:PORT" once it accepts connections; an address it cannot bind exits 1. \
            SIGTERM/SIGINT: stop taking requests, finish those in flight (at most \
            serve.drain_timeout_seconds), let a running run commit and stop; exit 0, or 4 when a run was \
            interrupted (POST it again to resume).
            """
    )

    @OptionGroup var options: PipelineOptions

    @Option(help: ArgumentHelp("The address to bind (overrides serve.host).", valueName: "address"))
    var host: String?

    @Option(help: ArgumentHelp("The TCP port (overrides serve.port; 0: any free port).", valueName: "port"))
    var port: Int?

    func run() async throws {
        try await withExitMapping {
            let logger = options.makeLogger()
            var configuration = try options.loadConfiguration()
            if let host { configuration.serve.host = host }
            if let port {
                guard (0...65_535).contains(port) else { throw SluiceError(.usage, "--port: from 0 to 65535") }
                configuration.serve.port = port
            }
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
            let server = try SluiceServer(
                configuration: configuration,
                components: components,
                // This very binary (by its real path, so that `ps` names it).
                runCommand: (URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path, runArguments),
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
}
