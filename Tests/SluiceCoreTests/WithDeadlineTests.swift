import Foundation
import Testing

@testable import SluiceCore

@Suite struct WithDeadlineTests {
    @Test func workThatFinishesInTimeReturnsItsResult() async throws {
        let value = try await withDeadline(.seconds(600), what: "work", setting: "a.setting") { 5 }
        #expect(value == 5)
    }

    @Test func workThatFailsInTimeThrowsItsError() async {
        let error = await #expect(throws: SluiceError.self) {
            try await withDeadline(.seconds(600), what: "work", setting: "a.setting") { () async throws -> Int in
                throw SluiceError(.extractionFailed, "bad")
            }
        }
        #expect(error?.code == .extractionFailed)
    }

    @Test func workThatOverrunsFailsWithATimeOutNamingTheSetting() async {
        let error = await #expect(throws: SluiceError.self) {
            try await withDeadline(.milliseconds(20), what: "extraction (pdf)", setting: "extract.timeout_seconds") {
                try await Task.sleep(for: .seconds(600))
                return 1
            }
        }
        #expect(error?.code == .timeout)
        #expect(error?.message == "extraction (pdf) took longer than 0.02 s (extract.timeout_seconds)")
    }

    /// A search past its deadline kept scanning after the 503: the work is cancelled at the deadline, so
    /// that work which checks cancellation stops there.
    @Test func workThatOverrunsIsCancelledAtTheDeadline() async throws {
        let workCancelled = BlockingQueue<Void>()
        await #expect(throws: SluiceError.self) {
            try await withDeadline(.milliseconds(20), what: "work", setting: "a.setting") {
                do {
                    try await Task.sleep(for: .seconds(600))
                } catch {
                    workCancelled.append(())
                    throw error
                }
                return 1
            }
        }
        #expect(await Task.detached { workCancelled.take() }.value != nil)
    }

    @Test func blockingWorkSeesTheCallersCancellationThroughItsFlag() async throws {
        let executor = BlockingExecutor(label: "sl-test-flag", threads: 1)
        defer { executor.shutdown() }
        let started = BlockingQueue<Void>()
        let caller = Task {
            try await executor.runCancellable { flag in
                started.append(())
                while !flag.isCancelled { usleep(1000) }
                try flag.check()
                return 1
            }
        }
        _ = await Task.detached { started.take() }.value
        caller.cancel()
        await #expect(throws: CancellationError.self) { try await caller.value }
    }

    @Test func aCancelledCallerIsResumedWithCancellationErrorAndTheWorkIsCancelled() async throws {
        let workCancelled = BlockingQueue<Void>()
        let started = BlockingQueue<Void>()
        let caller = Task {
            try await withDeadline(.seconds(600), what: "work", setting: "a.setting") {
                started.append(())
                do {
                    try await Task.sleep(for: .seconds(600))
                } catch {
                    workCancelled.append(())
                    throw error
                }
                return 1
            }
        }
        _ = await Task.detached { started.take() }.value
        caller.cancel()
        await #expect(throws: CancellationError.self) { try await caller.value }
        #expect(await Task.detached { workCancelled.take() }.value != nil)
    }

    @Test func anAlreadyCancelledCallerDoesNotWaitForTheWork() async {
        let caller = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await withDeadline(.seconds(600), what: "work", setting: "a.setting") {
                try? await Task.sleep(for: .seconds(600))
                return 1
            }
        }
        await #expect(throws: CancellationError.self) { try await caller.value }
    }
}
