import ArgumentParser
import Foundation
import Sluice
import SluiceCommandLine

#if canImport(Glibc)
import Glibc
#endif

/// `sluice extract-worker OPTIONS-JSON` (hidden): one supervised PDF/OCR worker process, started by a run
/// (see `ExtractWorkerPool`); it serves requests on standard input until it closes.
struct ExtractWorkerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "extract-worker",
        abstract: "Internal: a PDF/OCR extraction worker process, started by `sluice run`.",
        shouldDisplay: false
    )

    @Argument(help: "The extraction settings as JSON.")
    var options: String

    func run() throws {
        let decoded: ExtractWorkerProtocol.Options
        do {
            decoded = try JSONDecoder().decode(ExtractWorkerProtocol.Options.self, from: Data(options.utf8))
        } catch {
            throw ValidationError("extract-worker: invalid options JSON: \(error)")
        }
        throw ExitCode(ExtractWorker.serve(options: decoded))
    }
}

extension ExtractWorkerPool.Command {
    /// The workers' program: `sluice-extract-worker` when it is installed beside this binary (the same build's
    /// products; it starts in about half the CPU, see its main.swift), else this very binary's hidden
    /// subcommand (`/proc/self/exe`: the path it was started by may be relative or gone). The subcommand is
    /// also the fallback for a `sluice-extract-worker` of another build (its hello tells).
    static var sluiceWorker: ExtractWorkerPool.Command {
        let subcommand = ExtractWorkerPool.Command.Fallback(executable: "/proc/self/exe", arguments: ["extract-worker"])
        guard var lean = leanWorker(besideExecutable: Self.ownExecutable) else {
            return ExtractWorkerPool.Command(executable: subcommand.executable, arguments: subcommand.arguments)
        }
        lean.fallback = subcommand
        return lean
    }

    /// The executable of this process, resolved (nil where there is no /proc).
    static var ownExecutable: String? {
        guard let resolved = realpath("/proc/self/exe", nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `sluice-extract-worker` in the folder of `executable`, if it is there and executable.
    static func leanWorker(besideExecutable executable: String?) -> ExtractWorkerPool.Command? {
        guard let executable, let slash = executable.lastIndex(of: "/") else { return nil }
        let path = String(executable[...slash]) + "sluice-extract-worker"
        guard access(path, X_OK) == 0 else { return nil }
        return ExtractWorkerPool.Command(executable: String(path), arguments: [])
    }
}
