import Testing

@testable import SluiceCore

/// The owner with real tasks: a waiter sleeps until a change or its cancellation, never longer. Waits for events only (a generous guard
/// against a hang).
@Suite struct CancellableWaitersTests {
    private func eventually(_ condition: () -> Bool) async throws {
        let guardDeadline = ContinuousClock.now + .seconds(30)
        while !condition() {
            guard ContinuousClock.now < guardDeadline else { throw CancellationError() }
            await Task.yield()
        }
    }

    @Test func aWaiterWhoseConditionHoldsDoesNotSleep() async {
        let waiters = CancellableWaiters(true)
        await waiters.wait(unless: { $0 })
        #expect(waiters.waiting == 0)
    }

    @Test func aChangeWakesAWaiter() async throws {
        let waiters = CancellableWaiters(0)
        let waiter = Task { await waiters.wait(unless: { $0 > 0 }) }
        try await eventually { waiters.waiting == 1 }
        waiters.change { $0 += 1 }
        await waiter.value
        #expect(waiters.waiting == 0)
        #expect(waiters.withLock { $0 } == 1)
    }

    @Test func cancelBeforeTheWaitReturnsAtOnce() async {
        let waiters = CancellableWaiters(false)
        let waiter = Task {
            // Cancelled before it begins to wait: it must not sleep.
            while !Task.isCancelled { await Task.yield() }
            await waiters.wait(unless: { $0 })
            return Task.isCancelled
        }
        waiter.cancel()
        #expect(await waiter.value)
        #expect(waiters.waiting == 0)
    }

    @Test func cancelDuringTheWaitEndsThatWaitOnly() async throws {
        let waiters = CancellableWaiters(false)
        let cancelled = Task { await waiters.wait(unless: { $0 }) }
        let other = Task { await waiters.wait(unless: { $0 }) }
        try await eventually { waiters.waiting == 2 }
        cancelled.cancel()
        await cancelled.value
        #expect(waiters.waiting == 1, "the other waiter still sleeps")
        waiters.change { $0 = true }
        await other.value
        #expect(waiters.waiting == 0)
    }

    @Test func aChangeWakesEveryWaiter() async throws {
        let waiters = CancellableWaiters(0)
        var tasks: [Task<Int, Never>] = []
        for index in 0..<5 {
            tasks.append(
                Task {
                    await waiters.wait(unless: { _ in false })
                    return index
                }
            )
            // One at a time: each is asleep before the next begins.
            try await eventually { waiters.waiting == index + 1 }
        }
        // The continuations are resumed in the order they parked (the state machine's tests); each task then
        // runs when the executor takes it, so only that each woke is asserted here.
        waiters.change { $0 += 1 }
        var woken: Set<Int> = []
        for task in tasks { woken.insert(await task.value) }
        #expect(woken == Set(0..<5))
        #expect(waiters.waiting == 0)
    }
}
