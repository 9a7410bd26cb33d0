import CLibPQ
import Foundation
import Synchronization

/// Stops the statement a ``PGConnection`` is running, from another thread: libpq's `PQcancel`, which
/// opens a connection of its own to the server and asks it to cancel that backend's current statement.
///
/// A search runs inside one blocking libpq call on the sink's executor, where Swift's cancellation cannot
/// reach it: without this, a search whose request deadline has passed keeps its backend busy until the
/// statement ends by itself. ``PgvectorSink/withCancellableConnection(_:_:)`` arms one for each read-only
/// statement it runs and fires it when the calling task is cancelled (a request's deadline cancels its
/// work, ``SluiceCore/withDeadline(_:operation:)``); the statement then fails with SQLSTATE 57014
/// (`query_canceled`) and the caller gets `CancellationError`. Writes never take this path: a write
/// transaction is never left in doubt.
///
/// `Sendable`: the libpq cancel object is only touched under `state`'s lock, and `PQcancel` is safe to call
/// from any thread (libpq documents it for signal handlers).
final class PGQueryCanceller: Sendable {
    /// libpq's `PGcancel`, which may be used from any thread.
    private struct Cancel: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private struct State: ~Copyable {
        /// The connection's cancel object while its statement may run; nil before and after.
        var cancel: Cancel?
        /// The caller was cancelled: no body may start, and one that runs is asked to stop.
        var cancelled = false
    }

    private let state = Mutex(State())

    /// How many times ``cancel()`` asks (0.2 s apart) before leaving the statement to end by itself.
    private static let attempts = 25

    /// Runs `body` (blocking libpq calls on `connection`) so that ``cancel()`` stops it. After a cancelled
    /// body the connection is rolled back to no transaction, so the pool can hand it out again.
    /// - Throws: `CancellationError` if cancelled before or while `body` ran; otherwise what `body` throws.
    func running<T>(_ connection: PGConnection, _ body: () throws -> T) throws -> T {
        let cancel = connection.makeCancel().map(Cancel.init)
        let started = state.withLock { state -> Bool in
            guard !state.cancelled else { return false }
            state.cancel = cancel
            return true
        }
        guard started else {
            if let cancel { PQfreeCancel(cancel.pointer) }
            throw CancellationError()
        }
        let result = Result { try body() }
        let cancelled = state.withLock { state -> Bool in
            if let cancel = state.cancel { PQfreeCancel(cancel.pointer) }
            state.cancel = nil
            return state.cancelled
        }
        if case .failure = result, cancelled {
            // Disarmed first, so no late request can stop this: a cancel that hit the body's own ROLLBACK
            // would leave the connection in an aborted transaction.
            connection.rollBackOpenTransaction()
            throw CancellationError()
        }
        return try result.get()
    }

    /// Asks the server to stop the running statement (if any) and refuses the ones not yet started.
    /// `PQcancel` blocks on a connection of its own to the server, so it runs on a thread of its own: the
    /// caller is a task's cancellation handler, on Swift's cooperative pool.
    func cancel() {
        let armed = state.withLock { state -> Bool in
            state.cancelled = true
            return state.cancel != nil
        }
        guard armed else { return }
        Thread.detachNewThread { [self] in
            // A statement armed but not yet received by the server is not stopped by one request: ask again
            // until the statement has ended (disarmed), a bounded number of times.
            for _ in 0..<Self.attempts {
                let sent = state.withLock { state -> Bool in
                    guard let cancel = state.cancel else { return false }
                    var buffer = [CChar](repeating: 0, count: 256)
                    _ = PQcancel(cancel.pointer, &buffer, Int32(buffer.count))
                    return true
                }
                guard sent else { return }
                Thread.sleep(forTimeInterval: 0.2)
            }
        }
    }
}
