import ArgumentParser
import Foundation
import Sluice

extension AsyncParsableCommand {
    /// Parses the command line and runs the command, as ArgumentParser's `main()` does, except that an
    /// argument error exits 1 (a usage error, docs/DESIGN.md §7) rather than ArgumentParser's 64: `sluice` and
    /// `sluice-serve` answer a mistyped option alike.
    ///
    /// First of all it keeps libcrypto's state past `exit` (``OpenSSLAtExit``): the command may end while
    /// other threads are inside libcrypto.
    package static func parseAndRun() async {
        OpenSSLAtExit.keepGlobalState()
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(RunExitCode.usage.rawValue)
            }
            exit(withError: error)
        }
    }
}
