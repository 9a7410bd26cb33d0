import ArgumentParser
import Foundation
import Sluice

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
    /// This very binary, as a worker (`/proc/self/exe`: the path it was started by may be relative or gone).
    static var sluiceWorker: ExtractWorkerPool.Command {
        ExtractWorkerPool.Command(executable: "/proc/self/exe", arguments: ["extract-worker"])
    }
}
