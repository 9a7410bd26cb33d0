import Logging
import ServiceLifecycle
import SluiceCore
import UnixSignals

/// Reads the keys file again while `sluice serve` runs: on SIGHUP at once, and whenever the file changed,
/// looked at once a second (``APIKeyRing/refresh(force:)``). A key removed from the file stops working
/// from the next look on, without a restart.
struct APIKeyRingWatch: Service {
    /// Nil without a keys file: the service only waits for the shutdown.
    let ring: APIKeyRing?
    let logger: Logger
    var interval: Duration = .seconds(1)

    func run() async throws {
        guard let ring else { return try await gracefulShutdown() }
        let executor = BlockingExecutor(label: "sl-keys-watch", threads: 1)
        defer { executor.shutdown() }
        let signals = await UnixSignalsSequence(trapping: .sighup)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in signals.cancelOnGracefulShutdown() { await refresh(ring, executor, force: true) }
            }
            group.addTask {
                while !Task.isCancelled && !Task.isShuttingDownGracefully {
                    try? await Task.sleep(for: interval)
                    await refresh(ring, executor, force: false)
                }
            }
            await group.next()
            group.cancelAll()
        }
    }

    private func refresh(_ ring: APIKeyRing, _ executor: BlockingExecutor, force: Bool) async {
        do {
            if let count = try await executor.run({ try ring.refresh(force: force) }) {
                logger.notice("serve.keys_file read again: \(count) keys")
            }
        } catch {
            logger.error("serve.keys_file changed but cannot be used, the keys before stay in use: \(error)")
        }
    }
}
