import ArgumentParser
import Foundation
import Sluice
import SluiceCommandLine

#if canImport(Glibc)
import Glibc
#endif

/// `sluice serve`: runs `sluice-serve`, the server's own executable, installed beside `sluice` by the same
/// build. The server lives apart so that `sluice` builds without its dependency graph (swift-nio and
/// Hummingbird took 80% of the README's first command: docs/INSTALL.md). The options are parsed here too,
/// so that help and mistakes answer the same whether or not the server is installed.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the pipeline's index over HTTP: search, documents, runs, health, metrics (docs/SERVE.md).",
        discussion: ServeOptions.discussion
    )

    @OptionGroup var serve: ServeOptions

    func run() async throws {
        try await withExitMapping {
            let server = try Self.serverBeside(ExtractWorkerPool.Command.ownExecutable)
            // The same arguments, in the same order: everything after `serve`.
            let arguments = CommandLine.arguments
            let rest = arguments.firstIndex(of: Self.configuration.commandName!).map { arguments[($0 + 1)...] } ?? []
            let argv: [UnsafeMutablePointer<CChar>?] = ([server] + rest).map { strdup($0) } + [nil]
            execv(server, argv)
            let reason = String(cString: strerror(errno))
            throw SluiceError(.configuration, "serve: cannot start \(server): \(reason)")
        }
    }

    /// `sluice-serve` in the folder of `executable`, or why `serve` cannot run.
    static func serverBeside(_ executable: String?) throws -> String {
        guard let executable, let slash = executable.lastIndex(of: "/") else {
            throw SluiceError(.configuration, "serve: cannot find sluice's own executable (/proc/self/exe)")
        }
        let path = String(executable[...slash]) + "sluice-serve"
        guard access(path, X_OK) == 0 else {
            throw SluiceError(
                .configuration,
                "serve: the server is its own executable, sluice-serve, and it is not installed beside sluice "
                    + "(\(path)): swift build -c release --product sluice-serve, then install it there "
                    + "(docs/INSTALL.md)"
            )
        }
        return path
    }
}
