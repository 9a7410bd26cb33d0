import Foundation
import Testing

@testable import SluiceCore

@Suite struct BlockingQueueTests {
    @Test func elementsComeOutInTheOrderTheyWentIn() {
        let queue = BlockingQueue<Int>()
        for value in 1...5 { queue.append(value) }
        #expect(queue.count == 5)
        #expect((1...5).map { _ in queue.take() } == [1, 2, 3, 4, 5])
        #expect(queue.count == 0)
    }

    @Test func aTakingThreadWaitsForTheNextElement() async {
        let queue = BlockingQueue<Int>()
        let taken = BlockingQueue<Int?>()
        Thread { taken.append(queue.take()) }.start()
        // Whether the thread is already waiting or not yet started, it gets the element.
        queue.append(42)
        #expect(taken.take() == .some(42))
    }

    @Test func closeRefusesNewElementsAndLetsTakersFinishWhatIsLeft() {
        let queue = BlockingQueue<Int>()
        queue.append(1)
        queue.close()
        #expect(queue.isClosed)
        #expect(queue.append(2) == nil)
        #expect(queue.take() == 1)
        #expect(queue.take() == nil)
    }

    @Test func closeWakesEveryWaitingThread() {
        let queue = BlockingQueue<Int>()
        let ended = BlockingQueue<Void>()
        for _ in 0..<3 {
            Thread {
                _ = queue.take()
                ended.append(())
            }.start()
        }
        queue.close()
        for _ in 0..<3 { #expect(ended.take() != nil) }
    }

    @Test func aRemovedElementIsNeverTakenAndTheOthersKeepTheirOrder() throws {
        let queue = BlockingQueue<String>()
        queue.append("a")
        let ticket = try #require(queue.append("b"))
        queue.append("c")
        #expect(queue.remove(ticket) == "b")
        #expect(queue.remove(ticket) == nil, "removed once")
        #expect(queue.count == 2)
        #expect(queue.take() == "a")
        #expect(queue.take() == "c")
    }

    @Test func anElementAlreadyTakenCannotBeRemoved() throws {
        let queue = BlockingQueue<Int>()
        let ticket = try #require(queue.append(1))
        #expect(queue.take() == 1)
        #expect(queue.remove(ticket) == nil)
    }

    @Test func takeBeforeADeadlineThatPassedReportsTheTimeOutOrTheElement() {
        let queue = BlockingQueue<Int>()
        guard case .timedOut = queue.take(before: .now) else {
            Issue.record("expected a time-out")
            return
        }
        queue.append(3)
        guard case .element(3) = queue.take(before: .now) else {
            Issue.record("an element that is there is taken, deadline or not")
            return
        }
        queue.close()
        guard case .closed = queue.take(before: .now + .seconds(600)) else {
            Issue.record("expected closed")
            return
        }
    }
}
