import Logging
import ServiceLifecycle

/// The HTTP server as a service whose graceful shutdown has a deadline (`serve.drain_timeout_seconds`):
/// SIGTERM stops intake and lets requests in flight finish; those still going at the deadline (a client that
/// stopped sending its body, a slow stream) are cancelled and their connections closed, so a stop never
/// waits on a client.
struct DrainDeadlineService<Wrapped: Service>: Service {
    let wrapped: Wrapped
    let deadline: Duration
    let logger: Logger

    func run() async throws {
        let expired = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await wrapped.run()
                return false
            }
            group.addTask {
                try await gracefulShutdown()
                try await Task.sleep(for: deadline)
                return true
            }
            defer { group.cancelAll() }
            return try await group.next() ?? false
        }
        if expired {
            logger.warning(
                "requests still in flight at serve.drain_timeout_seconds: their connections were closed",
                metadata: ["sluice-drain-seconds": "\(deadline)"]
            )
        }
    }
}
