import Foundation
import SluiceTesting
import Testing

@testable import SluiceCore

/// ``BlockingExecutor``: work on its own threads, cancellation of work still queued, and no work on the
/// caller's thread after shutdown.
@Suite struct BlockingExecutorTests {
    @Test func workRunsOnThePoolsThreadAndReturnsItsResult() async throws {
        let executor = BlockingExecutor(label: "sl-test", threads: 2)
        defer { executor.shutdown() }
        let label = try await executor.run { BlockingExecutor.currentLabel }
        #expect(label == "sl-test")
        await #expect(throws: SluiceError.self) {
            try await executor.run { () throws -> Int in throw SluiceError(.state, "boom") }
        }
    }

    @Test func aCallerCancelledWhileItsWorkIsQueuedGetsCancellationErrorAndTheWorkNeverRuns() async throws {
        let executor = BlockingExecutor(label: "sl-test", threads: 1)
        defer { executor.shutdown() }
        let gate = BlockingQueue<Void>()
        let started = BlockingQueue<Void>()
        let ran = BlockingQueue<Void>()
        // The only thread is busy until the gate opens.
        let first = Task {
            try await executor.run {
                started.append(())
                gate.take()
                return 1
            }
        }
        _ = await Task.detached { started.take() }.value
        let second = Task { try await executor.run { ran.append(()) } }
        try await waitUntil { executor.queuedCount == 1 }
        second.cancel()
        await #expect(throws: CancellationError.self) { try await second.value }
        #expect(executor.queuedCount == 0)
        gate.append(())
        #expect(try await first.value == 1)
        // The thread is free again, and the cancelled work did not run.
        #expect(try await executor.run { 2 } == 2)
        #expect(ran.count == 0)
    }

    @Test func workThatStartedRunsToItsEndAndItsCancelledCallerGetsTheResult() async throws {
        let executor = BlockingExecutor(label: "sl-test", threads: 1)
        defer { executor.shutdown() }
        let gate = BlockingQueue<Void>()
        let started = BlockingQueue<Void>()
        let task = Task {
            try await executor.run {
                started.append(())
                gate.take()
                return "written"
            }
        }
        _ = await Task.detached { started.take() }.value
        task.cancel()
        gate.append(())
        #expect(try await task.value == "written")
    }

    /// Cancellations that race with the submission (before it is queued, while it is appended, while it
    /// waits, once it runs): every caller is resumed exactly once (a second resume traps, a missing one
    /// hangs), gets its result exactly when its work ran, and no cancelled work stays in the queue.
    @Test func racingCancellationsResumeEveryCallerOnceWithTheResultExactlyWhenItsWorkRan() async throws {
        let executor = BlockingExecutor(label: "sl-test", threads: 2)
        defer { executor.shutdown() }
        let ran = BlockingQueue<Int>()
        let count = 4000
        let outcomes = await withTaskGroup(of: (index: Int, finished: Bool).self) { group in
            for index in 0..<count {
                let task = Task {
                    try await executor.run {
                        ran.append(index)
                        return index
                    }
                }
                group.addTask {
                    // Cancelled at once, after a yield or not at all: the race lands in every state.
                    switch index % 4 {
                    case 0: task.cancel()
                    case 1:
                        await Task.yield()
                        task.cancel()
                    case 2:
                        for _ in 0..<(index % 7) { await Task.yield() }
                        task.cancel()
                    default: break
                    }
                    do {
                        #expect(try await task.value == index)
                        return (index, true)
                    } catch {
                        #expect(error is CancellationError, "\(error)")
                        return (index, false)
                    }
                }
            }
            var outcomes: [Int: Bool] = [:]
            for await outcome in group { outcomes[outcome.index] = outcome.finished }
            return outcomes
        }
        #expect(outcomes.count == count)
        var ranNow: [Int] = []
        while ran.count > 0, let index = ran.take() { ranNow.append(index) }
        #expect(outcomes.filter(\.value).map(\.key).sorted() == ranNow.sorted())
        #expect((0..<count).filter { $0 % 4 == 3 }.allSatisfy { outcomes[$0] == true })
        // A job cancelled while it was being appended is taken back by its submitter, just after.
        try await waitUntil { executor.queuedCount == 0 }
    }

    /// `afterwards` (a search's deferred memory release) runs on the pool thread after the caller has its
    /// result, and before that thread takes the next work.
    @Test func afterwardsRunsOnceTheCallerHasItsResultAndBeforeTheThreadTakesMoreWork() async throws {
        let executor = BlockingExecutor(label: "sl-test", threads: 1)
        defer { executor.shutdown() }
        let gate = BlockingQueue<Void>()
        let finished = BlockingQueue<(label: String?, openedAfterTheCallerResumed: Bool)>()
        // Had `afterwards` run before the caller resumed, the gate would time out (and say so), not hang.
        let afterwards: @Sendable () -> Void = {
            let opened = gate.take(before: .now + .seconds(600))
            if case .element = opened {
                finished.append((BlockingExecutor.currentLabel, true))
            } else {
                finished.append((BlockingExecutor.currentLabel, false))
            }
        }
        let value = try await executor.run(afterwards: afterwards) { 5 }
        #expect(value == 5)
        #expect(finished.count == 0, "the caller is resumed before `afterwards` ends")
        let next = Task { try await executor.run { finished.count } }
        try await waitUntil { executor.queuedCount == 1 }  // the only thread is still in `afterwards`
        gate.append(())
        #expect(try await next.value == 1, "the next work starts after `afterwards` ended")
        let outcome = try #require(finished.take())
        #expect(outcome.label == "sl-test")
        #expect(outcome.openedAfterTheCallerResumed)
    }

    @Test func afterwardsDoesNotRunForWorkCancelledWhileQueued() async throws {
        let executor = BlockingExecutor(label: "sl-test", threads: 1)
        defer { executor.shutdown() }
        let gate = BlockingQueue<Void>()
        let started = BlockingQueue<Void>()
        let upkept = BlockingQueue<Void>()
        let first = Task {
            try await executor.run {
                started.append(())
                gate.take()
            }
        }
        _ = await Task.detached { started.take() }.value
        let upkeep: @Sendable () -> Void = { upkept.append(()) }
        let second = Task { try await executor.runCancellable(afterwards: upkeep) { _ in 1 } }
        try await waitUntil { executor.queuedCount == 1 }
        second.cancel()
        await #expect(throws: CancellationError.self) { try await second.value }
        gate.append(())
        try await first.value
        try await executor.run {}  // after whatever the cancelled work would have done
        #expect(upkept.count == 0)
    }

    @Test func anAlreadyCancelledCallerDoesNotQueueWork() async throws {
        let executor = BlockingExecutor(label: "sl-test", threads: 1)
        defer { executor.shutdown() }
        let ran = BlockingQueue<Void>()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await executor.run { ran.append(()) }
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        // Work queued after it runs (one thread, first in first out): the cancelled one would have run first.
        try await executor.run {}
        #expect(ran.count == 0)
    }

    @Test func afterShutdownWorkIsRefusedNeverRunOnTheCallersThread() async throws {
        let executor = BlockingExecutor(label: "sl-test", threads: 1)
        executor.shutdown()
        let ran = BlockingQueue<Void>()
        await #expect(throws: SluiceError.self) {
            try await executor.run { ran.append(()) }
        }
        #expect(ran.count == 0)
    }

    @Test func queuedWorkStillRunsAfterShutdown() async throws {
        let executor = BlockingExecutor(label: "sl-test", threads: 1)
        let gate = BlockingQueue<Void>()
        let started = BlockingQueue<Void>()
        let first = Task {
            try await executor.run {
                started.append(())
                gate.take()
            }
        }
        _ = await Task.detached { started.take() }.value
        let second = Task { try await executor.run { 7 } }
        try await waitUntil { executor.queuedCount == 1 }
        executor.shutdown()
        gate.append(())
        try await first.value
        #expect(try await second.value == 7)
    }
}
