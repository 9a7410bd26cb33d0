import Testing

@testable import SluicePipeline

@Suite struct EmbedBatcherStateMachineTests {
    typealias Batcher = EmbedBatcherStateMachine<Int, ContinuousClock.Instant>
    let t0 = ContinuousClock.now

    @Test func closesOnCount() {
        var batcher = Batcher(maxCount: 3, maxTokens: 1_000, linger: .milliseconds(20))
        #expect(batcher.add(1, tokens: 1, now: t0).isEmpty)
        #expect(batcher.add(2, tokens: 1, now: t0).isEmpty)
        #expect(batcher.add(3, tokens: 1, now: t0) == [[1, 2, 3]])
        #expect(batcher.flush() == nil)
    }

    @Test func closesBeforeTheTokenLimitWouldBeExceeded() {
        var batcher = Batcher(maxCount: 100, maxTokens: 10, linger: .milliseconds(20))
        #expect(batcher.add(1, tokens: 4, now: t0).isEmpty)
        #expect(batcher.add(2, tokens: 4, now: t0).isEmpty)
        // 4 + 4 + 4 > 10: the pending batch goes first, the new item starts the next.
        #expect(batcher.add(3, tokens: 4, now: t0) == [[1, 2]])
        #expect(batcher.pendingTokens == 4)
        // An item at the limit on its own closes immediately.
        #expect(batcher.add(4, tokens: 10, now: t0) == [[3], [4]])
    }

    @Test func lingerSendsASlowTrickle() {
        var batcher = Batcher(maxCount: 100, maxTokens: 1_000, linger: .milliseconds(20))
        #expect(batcher.deadline == nil)
        _ = batcher.add(1, tokens: 1, now: t0)
        _ = batcher.add(2, tokens: 1, now: t0.advanced(by: .milliseconds(15)))
        #expect(batcher.deadline == t0.advanced(by: .milliseconds(20)))
        #expect(batcher.expire(now: t0.advanced(by: .milliseconds(19))) == nil)
        #expect(batcher.expire(now: t0.advanced(by: .milliseconds(20))) == [1, 2])
        #expect(batcher.deadline == nil)
    }

    @Test func closesBeforeTheRequestBytesLimitWouldBeExceeded() {
        var batcher = Batcher(maxCount: 100, maxTokens: 1_000, maxBytes: 1_000, linger: .milliseconds(20))
        #expect(batcher.add(1, tokens: 1, bytes: 400, now: t0).isEmpty)
        #expect(batcher.add(2, tokens: 1, bytes: 400, now: t0).isEmpty)
        #expect(batcher.add(3, tokens: 1, bytes: 400, now: t0) == [[1, 2]])
        #expect(batcher.pendingBytes == 400)
        #expect(batcher.add(4, tokens: 1, bytes: 600, now: t0) == [[3, 4]])
        #expect(batcher.pendingBytes == 0)
    }
}
