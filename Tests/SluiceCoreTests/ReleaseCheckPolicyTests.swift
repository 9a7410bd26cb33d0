import SluiceCore
import Testing

@Suite struct ReleaseCheckPolicyTests {
    @Test("it starts at the longest interval, a power of two")
    func startsAtTheLongest() {
        #expect(ReleaseCheckPolicy(longest: 64, targetPages: 256).interval == 64)
        #expect(ReleaseCheckPolicy(longest: 100, targetPages: 256).interval == 64)
        #expect(ReleaseCheckPolicy(longest: 0, targetPages: 256).interval == 1)
        #expect(ReleaseCheckPolicy(longest: 64, targetPages: 256, interval: 12).interval == 8, "where the last ended")
        #expect(ReleaseCheckPolicy(longest: 64, targetPages: 256, interval: 1_000).interval == 64)
    }

    @Test("while the pages barely grow, the interval stays at the longest")
    func slowGrowthKeepsTheLongest() {
        var policy = ReleaseCheckPolicy(longest: 64, targetPages: 256)
        #expect(policy.checked(residentPages: 10_000) == 64, "the first check only sets the level")
        for pages in stride(from: 10_010, through: 10_100, by: 10) {
            #expect(policy.checked(residentPages: pages) == 64)
        }
    }

    @Test("growth past the target shrinks the interval in proportion, down to one operation")
    func fastGrowthShrinks() {
        var policy = ReleaseCheckPolicy(longest: 64, targetPages: 256)
        _ = policy.checked(residentPages: 10_000)
        // 64 operations mapped 1,152 pages (18 a fault, one fault an operation): at that rate 14 operations
        // make the target; the largest power of two under it is 8.
        #expect(policy.checked(residentPages: 11_152) == 8)
        // Still 18 pages an operation: 8 × 18 = 144, under the target and over a quarter of it: unchanged.
        #expect(policy.checked(residentPages: 11_296) == 8)
        // A burst: 8 operations mapped 4,000 pages.
        #expect(policy.checked(residentPages: 15_296) == 1)
        #expect(policy.checked(residentPages: 25_296) == 1, "never below one operation")
    }

    @Test("once the growth falls under a quarter of the target, the interval doubles back to the longest")
    func slowGrowthGrowsBack() {
        var policy = ReleaseCheckPolicy(longest: 64, targetPages: 256)
        _ = policy.checked(residentPages: 10_000)
        #expect(policy.checked(residentPages: 30_000) == 1)
        var pages = 30_000
        var intervals: [Int] = []
        for _ in 0..<8 {
            pages += 10
            intervals.append(policy.checked(residentPages: pages))
        }
        #expect(intervals == [2, 4, 8, 16, 32, 64, 64, 64])
    }

    @Test("expecting faults checks after the next operation, then the interval grows back while growth is slow")
    func expectingFaultsChecksAtOnce() {
        var policy = ReleaseCheckPolicy(longest: 64, targetPages: 256)
        _ = policy.checked(residentPages: 10_000)
        #expect(policy.checked(residentPages: 10_010) == 64, "sorted puts barely fault")
        policy.expectFaults()
        #expect(policy.interval == 1)
        // Random puts: 18 pages each. 1 × 18 and 2 × 18 are under a quarter of the target: doubling; 4 × 18 is not.
        #expect(policy.checked(residentPages: 10_028) == 2)
        #expect(policy.checked(residentPages: 10_064) == 4)
        #expect(policy.checked(residentPages: 10_136) == 4)
    }

    @Test("growth counts from the level right after a release, not from the last check before it")
    func growthCountsFromTheRelease() {
        var policy = ReleaseCheckPolicy(longest: 64, targetPages: 256)
        _ = policy.checked(residentPages: 20_000)
        #expect(policy.checked(residentPages: 20_100) == 64)
        policy.released(residentPages: 12_000, releases: 3)
        #expect(policy.releasesSeen == 3)
        // 1,200 pages since the release: past the target, although the level is below the last check's.
        #expect(policy.checked(residentPages: 13_200) == 8)
    }
}
