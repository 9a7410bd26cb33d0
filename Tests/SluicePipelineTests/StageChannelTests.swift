import SluiceTesting
import Synchronization
import Testing

@testable import SluicePipeline

@Suite struct StageChannelTests {
    @Test(arguments: [(1, 1, 1), (3, 2, 4), (2, 4, 1), (8, 3, 3)])
    func manyProducersManyConsumersDeliverEverythingOnce(capacity: Int, producers: Int, consumers: Int) async throws {
        let channel = StageChannel<Int>(capacity: capacity, producers: producers)
        let perProducer = 500
        let received = try await withThrowingTaskGroup(of: [Int].self) { group in
            for p in 0..<producers {
                group.addTask {
                    for i in 0..<perProducer { try await channel.send(p * perProducer + i) }
                    channel.finish()
                    return []
                }
            }
            for _ in 0..<consumers {
                group.addTask {
                    var mine: [Int] = []
                    while let value = try await channel.receive() { mine.append(value) }
                    return mine
                }
            }
            var all: [Int] = []
            for try await part in group { all += part }
            return all
        }
        #expect(received.sorted() == Array(0..<(producers * perProducer)))
        #expect(channel.highWater <= capacity)
    }

    @Test func aFullChannelSuspendsTheProducerUntilTheConsumerTakes() async throws {
        let channel = StageChannel<Int>(capacity: 2)
        let sent = Atomic<Int>(0)
        let producer = Task {
            for i in 0..<10 {
                try await channel.send(i)
                sent.add(1, ordering: .relaxed)
            }
            channel.finish()
        }
        // Two buffered (however slow a loaded machine is to get there); the third send is suspended and
        // stays so. Waiting longer cannot make a correct channel fail.
        try await waitUntil { sent.load(ordering: .relaxed) >= 2 }
        try await Task.sleep(for: .milliseconds(100))
        #expect(sent.load(ordering: .relaxed) == 2)
        #expect(try await channel.receive() == 0)
        try await waitUntil { sent.load(ordering: .relaxed) >= 3 }
        try await Task.sleep(for: .milliseconds(50))
        #expect(sent.load(ordering: .relaxed) == 3, "one taken frees one slot, no more")
        var rest: [Int] = []
        while let value = try await channel.receive() { rest.append(value) }
        #expect(rest == Array(1..<10))
        try await producer.value
    }

    @Test func receiveWithTimeoutTimesOutThenStillGetsLaterElements() async throws {
        let channel = StageChannel<Int>(capacity: 1)
        guard case .timedOut = try await channel.receive(timeout: .milliseconds(30)) else {
            Issue.record("expected a time-out")
            return
        }
        try await channel.send(5)
        guard case .element(5) = try await channel.receive(timeout: .milliseconds(30)) else {
            Issue.record("expected the element")
            return
        }
        channel.finish()
        guard case .finished = try await channel.receive(timeout: .seconds(5)) else {
            Issue.record("expected finished")
            return
        }
    }
}
