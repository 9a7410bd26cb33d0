import ArgumentParser
import Foundation
import Sluice

/// Maps a failure to the process exit code of docs/DESIGN.md §7 and prints it (never a secret: messages are
/// built from codes and paths only).
package func exitCode(for error: any Error) -> ExitCode {
    let sluice = error as? SluiceError
    let message = sluice?.description ?? "\(error)"
    FileHandle.standardError.write(Data("sluice: \(DisplayEscaping.escaped(message))\n".utf8))
    return ExitCode(RunExitCode(for: error))
}

extension ExitCode {
    /// The process exit code for `code`: the CLI exits only with ``RunExitCode``s.
    package init(_ code: RunExitCode) {
        self.init(code.rawValue)
    }
}

/// Runs a command body, turning Sluice errors into exit codes.
package func withExitMapping(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as ExitCode {
        throw error
    } catch let error as CleanExit {
        throw error
    } catch {
        throw exitCode(for: error)
    }
}
