import Testing

@testable import SluiceCore

/// The waiters' bookkeeping without tasks: each continuation is handed back exactly once, whichever of a
/// change, a cancellation and the park comes first. Continuations are plain numbers here.
@Suite struct CancellableWaitersStateMachineTests {
    typealias Machine = CancellableWaitersStateMachine<Int>

    private func resumed(_ action: Machine.ParkAction) -> Int? {
        if case .resume(let continuation) = action { return continuation }
        return nil
    }

    private func resumed(_ action: Machine.CancelAction) -> Int? {
        if case .resume(let continuation) = action { return continuation }
        return nil
    }

    @Test func aWaiterWhoseConditionHoldsIsResumedAtOnce() {
        var machine = Machine()
        let id = machine.reserve()
        #expect(resumed(machine.park(id, 1, ready: true)) == 1)
        #expect(machine.waiting == 0)
    }

    @Test func aChangeResumesTheParkedInTheOrderTheyParked() {
        var machine = Machine()
        let ids = (0..<4).map { _ in machine.reserve() }
        // Parked in another order than they reserved.
        for (id, continuation) in [(ids[2], 12), (ids[0], 10), (ids[3], 13), (ids[1], 11)] {
            #expect(resumed(machine.park(id, continuation, ready: false)) == nil)
        }
        #expect(machine.waiting == 4)
        #expect(machine.resumeAll() == [12, 10, 13, 11])
        #expect(machine.waiting == 0)
        #expect(machine.resumeAll() == [], "a continuation is handed back once")
    }

    @Test func cancelBeforeParkResumesAtThePark() {
        var machine = Machine()
        let id = machine.reserve()
        #expect(resumed(machine.cancel(id)) == nil, "nothing to resume yet")
        #expect(resumed(machine.park(id, 7, ready: false)) == 7)
        #expect(machine.waiting == 0)
    }

    @Test func cancelDuringTheWaitResumesThatWaiterOnly() {
        var machine = Machine()
        let first = machine.reserve()
        let second = machine.reserve()
        _ = machine.park(first, 1, ready: false)
        _ = machine.park(second, 2, ready: false)
        #expect(resumed(machine.cancel(first)) == 1)
        #expect(machine.waiting == 1)
        #expect(machine.resumeAll() == [2])
    }

    @Test func cancelAfterTheChangeDoesNothingAndLeavesNoTrace() {
        var machine = Machine()
        let id = machine.reserve()
        _ = machine.park(id, 1, ready: false)
        #expect(machine.resumeAll() == [1])
        #expect(resumed(machine.cancel(id)) == nil, "resumed once already")
        // The late cancel left nothing behind: a new waiter parks normally.
        let next = machine.reserve()
        #expect(resumed(machine.park(next, 2, ready: false)) == nil)
        #expect(machine.waiting == 1)
    }

    @Test func aCancelledWaiterThatParkedIsNotResumedTwiceByAChange() {
        var machine = Machine()
        let id = machine.reserve()
        _ = machine.park(id, 1, ready: false)
        #expect(resumed(machine.cancel(id)) == 1)
        #expect(machine.resumeAll() == [])
    }
}
