import Synchronization

/// A flag that blocking work checks as it goes, set when the task waiting for that work is cancelled.
///
/// ``BlockingExecutor/run(_:)`` lets started work run to its end: right for a write transaction, wrong
/// for a scan nobody waits for any more (a search past its deadline kept a core busy for a minute). Work
/// run through ``BlockingExecutor/runCancellable(_:)`` gets a flag and stops where it checks it.
package final class CancellationFlag: Sendable {
    private let cancelled = Atomic<Bool>(false)

    package init() {}

    package func cancel() { cancelled.store(true, ordering: .relaxed) }

    package var isCancelled: Bool { cancelled.load(ordering: .relaxed) }

    /// - Throws: `CancellationError` once cancelled.
    package func check() throws {
        if isCancelled { throw CancellationError() }
    }
}

extension BlockingExecutor {
    /// ``run(_:)`` for work that can stop early: `body` gets a flag that the caller's cancellation sets,
    /// also after `body` started, and stops (throwing `CancellationError`) where it checks it. `afterwards`
    /// as in ``run(afterwards:_:)``.
    package func runCancellable<T: Sendable>(
        afterwards: (@Sendable () -> Void)? = nil,
        _ body: @escaping @Sendable (CancellationFlag) throws -> T
    ) async throws -> T {
        let flag = CancellationFlag()
        return try await withTaskCancellationHandler {
            try await run(afterwards: afterwards) { try body(flag) }
        } onCancel: {
            flag.cancel()
        }
    }
}
