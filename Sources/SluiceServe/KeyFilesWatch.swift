import Logging
import ServiceLifecycle
import SluiceCore
import UnixSignals

/// Reads the key files again while `sluice serve` runs (the API keys, the JWKS: ``ReloadingFile``): on
/// SIGHUP at once, and whenever a file changed, looked at once a second. A key removed from its file stops
/// working from the next look on, without a restart. SIGHUP also reopens the audit log (``AuditLog``), so
/// that a log rotated by renaming goes on in a new file.
struct KeyFilesWatch: Service {
    let files: [any RefreshableFile]
    /// Done on every SIGHUP, after the files are read again. With no file and nothing to do, the service
    /// only waits for the shutdown (SIGHUP keeps its default action).
    var onHangup: (@Sendable () -> Void)? = nil
    let logger: Logger
    var interval: Duration = .seconds(1)

    func run() async throws {
        if files.isEmpty && onHangup == nil { return try await gracefulShutdown() }
        let executor = BlockingExecutor(label: "sl-keys-watch", threads: 1)
        defer { executor.shutdown() }
        let signals = await UnixSignalsSequence(trapping: .sighup)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in signals.cancelOnGracefulShutdown() {
                    for file in files { await refresh(file, executor, force: true) }
                    if let onHangup { try? await executor.run(onHangup) }
                }
            }
            group.addTask {
                if files.isEmpty {
                    try? await gracefulShutdown()
                    return
                }
                while !Task.isCancelled && !Task.isShuttingDownGracefully {
                    try? await Task.sleep(for: interval)
                    for file in files { await refresh(file, executor, force: false) }
                }
            }
            await group.next()
            group.cancelAll()
        }
    }

    private func refresh(_ file: any RefreshableFile, _ executor: BlockingExecutor, force: Bool) async {
        do {
            if let read = try await executor.run({ try file.refreshed(force: force) }) {
                logger.notice("\(file.setting) read again: \(read)")
            }
        } catch {
            logger.error("\(file.setting) changed but cannot be used, the one before stays in use: \(error)")
        }
    }
}
