import SluiceCore
import Testing

@Suite struct HeapTrimPolicyTests {
    private static let mb = 1 << 20

    /// A policy as the releaser's thread starts it: trimmed once, 10 MB free, 100 MB anonymous.
    private func started(trimEvery: Int = 1_000) -> HeapTrimPolicy {
        var policy = HeapTrimPolicy(trimEvery: trimEvery, thresholdBytes: 4 * Self.mb)
        policy.trimmed(freeBytes: 10 * Self.mb, anonymousBytes: 100 * Self.mb)
        return policy
    }

    @Test("while anonymous memory does not grow by the threshold, the arenas are never looked at")
    func noLookWithoutGrowth() {
        var policy = started()
        for anonymous in [100, 101, 103, 99, 102, 102] {
            #expect(policy.tick(anonymousBytes: anonymous * Self.mb) == .none)
        }
        #expect(policy.looks == 0)
    }

    @Test("growth by the threshold asks for a look; a trim follows only if the free bytes grew by it too")
    func lookThenTrimOnFreedBytes() {
        var policy = started()
        #expect(policy.tick(anonymousBytes: 104 * Self.mb) == .measureFree)
        #expect(policy.freeBytesMeasured(12 * Self.mb) == false, "2 MB more free: under the threshold")
        #expect(policy.tick(anonymousBytes: 106 * Self.mb) == .none, "growth counts from the last look")
        #expect(policy.tick(anonymousBytes: 108 * Self.mb) == .measureFree)
        #expect(policy.freeBytesMeasured(15 * Self.mb) == true, "5 MB more free than after the trim")
        policy.trimmed(freeBytes: 9 * Self.mb, anonymousBytes: 103 * Self.mb)
        #expect(policy.tick(anonymousBytes: 106 * Self.mb) == .none)
        #expect(policy.looks == 2)
    }

    @Test("a fall in anonymous memory lowers the level growth counts from")
    func fallLowersTheReference() {
        var policy = started()
        #expect(policy.tick(anonymousBytes: 80 * Self.mb) == .none)
        #expect(policy.tick(anonymousBytes: 84 * Self.mb) == .measureFree, "4 MB above the lower level")
    }

    @Test("free bytes reused since the last trim lower the level freed bytes count from")
    func reuseLowersTheFreeReference() {
        var policy = started()
        #expect(policy.tick(anonymousBytes: 104 * Self.mb) == .measureFree)
        #expect(policy.freeBytesMeasured(2 * Self.mb) == false)
        #expect(policy.tick(anonymousBytes: 108 * Self.mb) == .measureFree)
        #expect(policy.freeBytesMeasured(7 * Self.mb) == true, "5 MB freed above the lower level")
    }

    @Test("the regular trim comes every trimEvery ticks, grown or not")
    func regularTrim() {
        var policy = started(trimEvery: 5)
        let actions = (1...10).map { _ in policy.tick(anonymousBytes: 100 * Self.mb) }
        #expect(actions.enumerated().filter { $0.element == .trim }.map(\.offset) == [4, 9])
        #expect(policy.looks == 0)
    }

    @Test("without a measure of anonymous memory, every tick looks (the behaviour before the policy)")
    func unknownAnonymousLooksEveryTick() {
        var policy = started()
        #expect(policy.tick(anonymousBytes: nil) == .measureFree)
        #expect(policy.tick(anonymousBytes: nil) == .measureFree)
    }
}
