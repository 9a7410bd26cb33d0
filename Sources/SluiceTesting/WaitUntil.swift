/// A condition a test waited for that never came (``waitUntil(within:_:)``).
package struct ConditionNotReached: Error, CustomStringConvertible {
    package let within: Duration
    package var description: String { "condition not reached within \(within)" }
}

/// Polls `condition` every 5 ms until it holds. `within` bounds a stuck test (minutes, so a loaded machine
/// never ends a test that is merely slow); it is not a performance claim.
/// - Throws: ``ConditionNotReached`` when `within` passed first; `CancellationError` if the task was
///   cancelled.
package func waitUntil(within: Duration = .seconds(600), _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + within
    while !condition() {
        if ContinuousClock.now > deadline { throw ConditionNotReached(within: within) }
        try await Task.sleep(for: .milliseconds(5))
    }
}
