import Foundation
import SluiceCore

/// Connections for the sink's executor threads: each job checks one out, uses it on its own thread and
/// returns it. A broken connection reconnects on its next use.
///
/// `@unchecked Sendable`: the array is guarded by `lock`, and a checked-out connection is used by exactly
/// one thread until it is checked in again.
final class PGConnectionPool: @unchecked Sendable {
    private let lock = NSLock()
    private var idle: [PGConnection] = []
    private let url: String
    private let password: String?

    init(url: String, password: String?) {
        self.url = url
        self.password = password
    }

    /// Runs `body` with a connection (opened on demand). Call only from a blocking thread.
    func with<T>(_ body: (PGConnection) throws -> T) throws -> T {
        lock.lock()
        let reused = idle.popLast()
        lock.unlock()
        let connection = try reused ?? PGConnection(url: url, password: password)
        defer {
            lock.lock()
            idle.append(connection)
            lock.unlock()
        }
        return try body(connection)
    }
}
