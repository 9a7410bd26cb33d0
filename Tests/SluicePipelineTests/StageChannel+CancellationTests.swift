import SluiceTesting
import Testing

@testable import SluicePipeline

/// A task cancelled in ``StageChannel/send(_:)`` or ``StageChannel/receive()`` is resumed with
/// `CancellationError` and leaves the channel as if it had never called.
@Suite struct StageChannelCancellationTests {
    @Test func aSenderCancelledWhileWaitingForRoomThrowsAndItsElementIsNotDelivered() async throws {
        let channel = StageChannel<Int>(capacity: 1)
        try await channel.send(1)
        let sender = Task { try await channel.send(2) }
        try await waitUntil { channel.waiting.senders == 1 }
        sender.cancel()
        await #expect(throws: CancellationError.self) { try await sender.value }
        #expect(channel.waiting.senders == 0)
        #expect(channel.count == 1)
        // The channel goes on: the buffered element, a new one, then the end; never the cancelled one.
        #expect(try await channel.receive() == 1)
        try await channel.send(3)
        channel.finish()
        #expect(try await channel.receive() == 3)
        #expect(try await channel.receive() == nil)
    }

    @Test func aReceiverCancelledWhileWaitingThrowsAndTheNextElementWaitsForTheNextReceiver() async throws {
        let channel = StageChannel<Int>(capacity: 1)
        let receiver = Task { try await channel.receive() }
        try await waitUntil { channel.waiting.receivers == 1 }
        receiver.cancel()
        await #expect(throws: CancellationError.self) { try await receiver.value }
        #expect(channel.waiting.receivers == 0)
        // Not handed to the cancelled receiver: buffered for the next one.
        try await channel.send(7)
        #expect(channel.count == 1)
        #expect(try await channel.receive() == 7)
    }

    @Test func aReceiverWithATimeoutThatIsCancelledThrowsRatherThanTimingOut() async throws {
        let channel = StageChannel<Int>(capacity: 1)
        let receiver = Task { try await channel.receive(timeout: .seconds(600)) }
        try await waitUntil { channel.waiting.receivers == 1 }
        receiver.cancel()
        await #expect(throws: CancellationError.self) { try await receiver.value }
        #expect(channel.waiting.receivers == 0)
    }

    @Test func anAlreadyCancelledTaskNeitherSendsNorTakes() async throws {
        let channel = StageChannel<Int>(capacity: 2)
        try await channel.send(1)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            let sent: Bool
            do {
                try await channel.send(2)
                sent = true
            } catch {
                sent = false
            }
            let took: Bool
            do {
                _ = try await channel.receive()
                took = true
            } catch {
                took = false
            }
            return (sent, took)
        }
        let (sent, took) = await task.value
        #expect(!sent)
        #expect(!took)
        #expect(channel.count == 1)
        #expect(try await channel.receive() == 1)
    }

    @Test func aBatchReceiverCancelledWhileWaitingThrows() async throws {
        let channel = StageChannel<Int>(capacity: 4)
        let receiver = Task { try await channel.receiveBatch(max: 4) }
        try await waitUntil { channel.waiting.receivers == 1 }
        receiver.cancel()
        await #expect(throws: CancellationError.self) { try await receiver.value }
        try await channel.send(1)
        #expect(try await channel.receiveBatch(max: 4) == [1])
    }
}
