import Testing

/// Polls `condition` every 5 ms for up to 30 s (a bound for a stuck test, not a performance claim).
func waitUntil(_ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(30)
    while !condition() {
        if ContinuousClock.now > deadline {
            Issue.record("condition not reached in 30 s")
            return
        }
        try await Task.sleep(for: .milliseconds(5))
    }
}
