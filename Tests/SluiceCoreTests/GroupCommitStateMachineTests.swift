import Testing

@testable import SluiceCore

/// ``GroupCommitStateMachine``: one drainer, groups as the longest prefix within the budget, withdrawal.
@Suite struct GroupCommitStateMachineTests {
    @Test func theFirstWriteStartsTheDrainerAndTheOthersWaitForIt() {
        var machine = GroupCommitStateMachine<String>(budget: 10)
        #expect(machine.enqueue(id: 1, weight: 3, "a") == .startDrainer)
        #expect(machine.enqueue(id: 2, weight: 3, "b") == .none)
        #expect(machine.nextGroup()?.map(\.payload) == ["a", "b"])
        #expect(machine.isDraining)
        #expect(machine.enqueue(id: 3, weight: 3, "c") == .none)  // the drainer still runs: it takes c
        #expect(machine.nextGroup()?.map(\.payload) == ["c"])
        #expect(machine.nextGroup() == nil)
        #expect(!machine.isDraining)
        #expect(machine.enqueue(id: 4, weight: 3, "d") == .startDrainer)
    }

    @Test(
        "a group is the longest prefix within the budget, in order; a heavy write goes alone",
        arguments: [
            ([4, 4, 2, 1], 10, [[0, 1, 2], [3]]),
            ([12, 1, 1], 10, [[0], [1, 2]]),
            ([1, 12, 1], 10, [[0], [1], [2]]),
            ([5, 5, 5], 5, [[0], [1], [2]]),
            ([0, 0, 10], 10, [[0, 1, 2]]),
        ]
    )
    func groupsFitTheBudget(weights: [Int], budget: Int, expected: [[Int]]) {
        var machine = GroupCommitStateMachine<Int>(budget: budget)
        for (index, weight) in weights.enumerated() { _ = machine.enqueue(id: UInt64(index), weight: weight, index) }
        var groups: [[Int]] = []
        while let group = machine.nextGroup() { groups.append(group.map(\.payload)) }
        #expect(groups == expected)
    }

    @Test func aWithdrawnWriteIsNeverTakenAndATakenOneCannotBeWithdrawn() {
        var machine = GroupCommitStateMachine<String>(budget: 10)
        _ = machine.enqueue(id: 1, weight: 1, "a")
        _ = machine.enqueue(id: 2, weight: 1, "b")
        #expect(machine.withdraw(id: 2) == "b")
        #expect(machine.waitingCount == 1)
        #expect(machine.nextGroup()?.map(\.payload) == ["a"])
        #expect(machine.withdraw(id: 1) == nil)
    }

    @Test func aRefusedDrainerHandsBackEveryWaitingWriteAndTheNextWriteTriesAgain() {
        var machine = GroupCommitStateMachine<String>(budget: 10)
        _ = machine.enqueue(id: 1, weight: 1, "a")
        _ = machine.enqueue(id: 2, weight: 1, "b")
        #expect(machine.drainerRefused().map(\.payload) == ["a", "b"])
        #expect(machine.waitingCount == 0)
        #expect(machine.enqueue(id: 3, weight: 1, "c") == .startDrainer)
    }
}

extension GroupCommitStateMachineTests {
    @Test func withoutGroupingEachWriteIsATransactionOfItsOwnInOrder() {
        var machine = GroupCommitStateMachine<Int>(budget: 10, grouping: false)
        for index in 0..<3 { _ = machine.enqueue(id: UInt64(index), weight: 1, index) }
        var groups: [[Int]] = []
        while let group = machine.nextGroup() { groups.append(group.map(\.payload)) }
        #expect(groups == [[0], [1], [2]])
    }
}
