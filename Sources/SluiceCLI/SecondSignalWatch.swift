import Foundation
import ServiceLifecycle
import Sluice
import UnixSignals

#if canImport(Glibc)
import Glibc
#endif

/// Counts SIGINT and SIGTERM while a job runs: the first starts the group's graceful shutdown (the group traps
/// it too; this covers a signal that comes before the group has registered its own handlers), the second
/// exits 4 at once.
enum SecondSignalWatch {
    static func run<T: Sendable>(
        group: ServiceGroup,
        _ body: () async throws -> T
    ) async throws -> T {
        let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
        let watch = Task {
            var seen = 0
            for await _ in signals {
                seen += 1
                if seen == 1 {
                    await group.triggerGracefulShutdown()
                } else {
                    FileHandle.standardError.write(
                        Data("\nsluice: second signal, stopping now; run again to resume\n".utf8)
                    )
                    _exit(RunExitCode.interrupted.rawValue)
                }
            }
        }
        defer { watch.cancel() }
        return try await body()
    }
}
