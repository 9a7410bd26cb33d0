import ArgumentParser

/// What `sluice serve` and `sluice-serve` take: the pipeline options, `--host` and `--port`. Both parse them,
/// so that `sluice serve --help` and a mistyped option answer the same without the server installed.
package struct ServeOptions: ParsableArguments {
    /// The help text both commands show.
    package static let discussion = """
        Binds serve.host:serve.port (default 127.0.0.1:8080); any address but loopback (127.0.0.0/8, \
        ::1, localhost) needs a bearer token (serve.api_key_env). On loopback it answers only its own \
        Host names and JSON bodies, so web pages cannot use it (docs/SERVE.md, "Browsers"). Prints \
        "listening on http://HOST:PORT" once it accepts connections; an address it cannot bind exits 1. \
        SIGTERM/SIGINT: stop taking requests, finish those in flight (at most \
        serve.drain_timeout_seconds), let a running run commit and stop; exit 0, or 4 when a run was \
        interrupted (POST it again to resume). The server is its own executable, `sluice-serve`, which \
        `sluice serve` runs when it is installed beside `sluice` (docs/INSTALL.md).
        """

    package init() {}

    @OptionGroup package var options: PipelineOptions

    @Option(help: ArgumentHelp("The address to bind (overrides serve.host).", valueName: "address"))
    package var host: String?

    @Option(help: ArgumentHelp("The TCP port (overrides serve.port; 0: any free port).", valueName: "port"))
    package var port: Int?
}
