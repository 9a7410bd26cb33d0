import Foundation
import Logging
import ServiceLifecycle
import Sluice
import Synchronization
import UnixSignals

/// Work that runs to its end (`sluice run`, `sluice verify`) as a service under swift-service-lifecycle, the
/// lifecycle `sluice serve` runs under: a batch job is a `Service` whose `run()` returns when the work is done.
///
/// - The `ServiceGroup` traps SIGINT and SIGTERM. Its graceful shutdown requests the work's
///   ``ShutdownSignal``: intake stops, waits that only pass time end, documents in flight finish and are
///   committed, and the work returns (the run then exits 4).
/// - A second SIGINT/SIGTERM exits 4 at once (``SecondSignalWatch``): the checkpoint is only ever written in
///   transactions, so it stays consistent. A `ServiceGroup` ignores a second graceful-shutdown signal, hence the
///   watch.
/// - There is no deadline beyond the work's own (request timeouts, `extract.timeout_seconds`), as before.
final class BatchJob<Value: Sendable>: Service, Sendable {
    private let logger: Logger
    private let work: @Sendable (ShutdownSignal) async throws -> Value
    private let outcome = Mutex<Result<Value, any Error>?>(nil)

    private init(logger: Logger, work: @escaping @Sendable (ShutdownSignal) async throws -> Value) {
        self.logger = logger
        self.work = work
    }

    /// Runs `work` under a `ServiceGroup` that stops it gracefully on the first SIGINT/SIGTERM.
    /// - Returns: what `work` returned.
    /// - Throws: what `work` threw.
    static func run(
        logger: Logger,
        _ work: @escaping @Sendable (ShutdownSignal) async throws -> Value
    ) async throws -> Value {
        let job = BatchJob(logger: logger, work: work)
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: job, successTerminationBehavior: .gracefullyShutdownGroup)],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
        )
        try await SecondSignalWatch.run(group: group) { try await group.run() }
        // The group starts its service even when a signal came first (the work then stops at once).
        guard let outcome = job.outcome.withLock({ $0 }) else { throw CancellationError() }
        return try outcome.get()
    }

    /// Runs the work; its outcome (a value or an error) is kept for ``run(logger:_:)``, so that the group
    /// ends the same way whatever the work's end.
    func run() async {
        let shutdown = ShutdownSignal()
        let logger = self.logger
        let result: Result<Value, any Error>
        do {
            result = .success(
                try await withGracefulShutdownHandler {
                    try await work(shutdown)
                } onGracefulShutdown: {
                    shutdown.request()
                    logger.notice(
                        "signal received: finishing documents in flight, then stopping (send again to stop at once)"
                    )
                }
            )
        } catch {
            result = .failure(error)
        }
        outcome.withLock { $0 = result }
    }
}
