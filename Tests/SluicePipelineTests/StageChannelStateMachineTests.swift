import SluiceTesting
import Testing

@testable import SluicePipeline

@Suite struct StageChannelStateMachineTests {
    typealias Machine = StageChannelStateMachine<Int, String, String>

    @Test func fullBufferSuspendsTheSenderAndKeepsItsElement() {
        var machine = Machine(capacity: 2, producers: 1)
        guard case .buffered = machine.send(1, id: 1, token: "s1") else {
            Issue.record("expected buffered")
            return
        }
        guard case .buffered = machine.send(2, id: 2, token: "s2") else {
            Issue.record("expected buffered")
            return
        }
        guard case .suspend = machine.send(3, id: 3, token: "s3") else {
            Issue.record("expected suspend")
            return
        }
        // Receiving makes room: the suspended sender's element moves into the buffer and it is resumed.
        guard case .element(1, let resumed) = machine.receive(id: 4, token: "r") else {
            Issue.record("expected 1")
            return
        }
        #expect(resumed == "s3")
        guard case .element(2, nil) = machine.receive(id: 5, token: "r") else {
            Issue.record("expected 2")
            return
        }
        guard case .element(3, nil) = machine.receive(id: 6, token: "r") else {
            Issue.record("expected 3")
            return
        }
        #expect(machine.highWater == 2)
    }

    @Test func receiverWaitsThenGetsTheElementDirectly() {
        var machine = Machine(capacity: 1, producers: 1)
        guard case .suspend = machine.receive(id: 1, token: "r1") else {
            Issue.record("expected suspend")
            return
        }
        guard case .resumeReceiver("r1", 7) = machine.send(7, id: 2, token: "s") else {
            Issue.record("expected hand-over")
            return
        }
        #expect(machine.count == 0)
    }

    @Test func finishWakesWaitingReceiversOnlyAfterTheLastProducer() {
        var machine = Machine(capacity: 1, producers: 2)
        guard case .suspend = machine.receive(id: 1, token: "r1") else {
            Issue.record("expected suspend")
            return
        }
        #expect(machine.finishProducer().isEmpty)
        #expect(machine.finishProducer() == ["r1"])
        guard case .finished = machine.receive(id: 2, token: "r2") else {
            Issue.record("expected finished")
            return
        }
    }

    @Test func bufferedElementsAreDeliveredAfterFinish() {
        var machine = Machine(capacity: 4, producers: 1)
        _ = machine.send(1, id: 1, token: "s")
        _ = machine.send(2, id: 2, token: "s")
        #expect(machine.finishProducer().isEmpty)
        guard case .element(1, _) = machine.receive(id: 3, token: "r") else {
            Issue.record("expected 1")
            return
        }
        let drained = machine.drainAvailable(max: 10)
        #expect(drained.elements == [2])
        guard case .finished = machine.receive(id: 4, token: "r") else {
            Issue.record("expected finished")
            return
        }
    }

    @Test func expiredReceiverIsRemovedOnce() {
        var machine = Machine(capacity: 1, producers: 1)
        _ = machine.receive(id: 9, token: "r9")
        #expect(machine.removeReceiver(id: 9) == "r9")
        #expect(machine.removeReceiver(id: 9) == nil)
        // The element now goes to the buffer, not to the expired receiver.
        guard case .buffered = machine.send(1, id: 10, token: "s") else {
            Issue.record("expected buffered")
            return
        }
    }

    @Test func aRemovedSenderTakesItsElementWithItAndTheOthersKeepTheirOrder() {
        var machine = Machine(capacity: 1, producers: 1)
        _ = machine.send(1, id: 1, token: "s1")
        guard case .suspend = machine.send(2, id: 2, token: "s2") else {
            Issue.record("expected suspend")
            return
        }
        guard case .suspend = machine.send(3, id: 3, token: "s3") else {
            Issue.record("expected suspend")
            return
        }
        let removed = machine.removeSender(id: 2)
        #expect(removed?.token == "s2")
        #expect(removed?.element == 2)
        #expect(machine.removeSender(id: 2) == nil)
        #expect(machine.waiting.senders == 1)
        guard case .element(1, "s3") = machine.receive(id: 4, token: "r") else {
            Issue.record("expected 1, resuming s3")
            return
        }
        guard case .element(3, nil) = machine.receive(id: 5, token: "r") else {
            Issue.record("expected 3")
            return
        }
    }

    @Test func aSenderWhoseElementWasTakenCannotBeRemoved() {
        var machine = Machine(capacity: 1, producers: 1)
        _ = machine.send(1, id: 1, token: "s1")
        _ = machine.send(2, id: 2, token: "s2")
        guard case .element(1, "s2") = machine.receive(id: 3, token: "r") else {
            Issue.record("expected 1, resuming s2")
            return
        }
        // The send already succeeded: a late cancellation must not take the element back.
        #expect(machine.removeSender(id: 2) == nil)
        #expect(machine.count == 1)
    }

    @Test(arguments: [1, 2, 3, 7])
    func randomInterleavingsNeverDropOrDuplicate(capacity: Int) {
        var machine = Machine(capacity: capacity, producers: 1)
        var rng = SplitMix64(seed: UInt64(capacity))
        var suspendedSenders: [String] = []
        var received: [Int] = []
        var next = 0
        var waitingReceiver = false
        for _ in 0..<5_000 {
            if rng.next() % 2 == 0 && next < 2_000 {
                switch machine.send(next, id: next, token: "s\(next)") {
                case .buffered: break
                case .suspend: suspendedSenders.append("s\(next)")
                case .resumeReceiver(_, let element):
                    received.append(element)
                    waitingReceiver = false
                }
                next += 1
            } else if !waitingReceiver {
                switch machine.receive(id: -1, token: "r") {
                case .element(let element, let sender):
                    received.append(element)
                    if let sender { suspendedSenders.removeAll { $0 == sender } }
                case .suspend: waitingReceiver = true
                case .finished: Issue.record("not finished yet")
                }
            }
            #expect(machine.count <= capacity)
        }
        _ = machine.finishProducer()
        while true {
            guard case .element(let element, let sender) = machine.receive(id: -2, token: "r") else { break }
            received.append(element)
            if let sender { suspendedSenders.removeAll { $0 == sender } }
        }
        #expect(received == Array(0..<next))
        #expect(suspendedSenders.isEmpty)
    }
}
