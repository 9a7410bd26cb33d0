/// How many LMDB operations a transaction runs between two checks of the ``ResidentMemoryReleaser``'s budget
/// (pure: the resident pages each check finds in, the next interval out).
///
/// A check costs one `pread` of `/proc/self/statm` (about 1 µs), so it cannot follow every operation of a
/// load that makes millions (the keyword index's puts and merges' cursor steps, which rarely fault). But an
/// operation on a large B-tree with random keys (the state's embedding cache and checkpoints) faults a leaf
/// or two, and the kernel maps up to 15 cached neighbours with each (fault-around; ~18 pages on kernel 6.18):
/// about 130 KB an operation, 8 MB over 64 of them. Measured on the 10× benchmark corpus in a release build
/// (session 31): with a check every 64 operations, the state's map held 20.6–22.6 MB at the moment of the peak
/// against a budget of 4 MB. So each transaction's interval follows what its checks find: when the process's
/// file-backed resident pages grew by more than ``targetPages`` since its previous check (or since a release
/// after it), the interval shrinks in proportion, down to one operation; when they grew by less than a quarter
/// of it, it doubles, up to ``longest``. Intervals are powers of two. Each transaction keeps its own (the
/// rate is its own: a writer of sorted keyword postings next to a reader of random cache keys), starting from
/// the last interval its environment's transactions ended with.
package struct ReleaseCheckPolicy: Sendable {
    /// The longest interval, in operations.
    package let longest: Int
    /// The growth of file-backed resident pages allowed between two checks.
    package let targetPages: Int
    /// Operations between two checks now: a power of two, 1 … ``longest``.
    package private(set) var interval: Int
    /// The resident pages at the last check or release (nil: none yet).
    private var lastPages: Int?
    /// The releases counted when the level was last set (``released(residentPages:releases:)``).
    package private(set) var releasesSeen = 0

    /// - Parameters:
    ///   - longest: the longest interval (rounded down to a power of two, at least 1).
    ///   - targetPages: the growth allowed between two checks (at least 1).
    ///   - interval: the first interval (rounded down to a power of two, 1 … `longest`); nil: `longest`.
    package init(longest: Int = 64, targetPages: Int, interval: Int? = nil) {
        self.longest = Self.powerOfTwo(atMost: max(1, longest))
        self.targetPages = max(1, targetPages)
        self.interval = min(self.longest, Self.powerOfTwo(atMost: interval ?? self.longest))
    }

    /// Records the resident pages a check found; returns the interval until the next check.
    package mutating func checked(residentPages pages: Int) -> Int {
        defer { lastPages = pages }
        guard let last = lastPages else { return interval }
        let growth = pages - last
        if growth > targetPages {
            // Shrink in proportion: at this rate, the next interval's growth is at most about the target.
            interval = Self.powerOfTwo(atMost: interval * targetPages / growth)
        } else if growth * 4 < targetPages && interval < longest {
            interval *= 2
        }
        return interval
    }

    /// The operations that follow will fault more than those before (a run of puts with random keys after
    /// puts with sorted ones): check after the next one, and let the interval grow back from there. Measured on
    /// the 10× corpus with `exact` (2026-11-30): the local store's vector puts came after the keyword index's
    /// sorted puts with the interval they had left, 64, and each faulted a leaf with its neighbours; the windows
    /// between two releases that mapped most were two-thirds those puts (docs/BENCHMARKS.md).
    package mutating func expectFaults() {
        interval = 1
    }

    /// Records the resident pages right after a release (and the releases counted then): growth counts from
    /// there. Also where a transaction starts: the level and the releases at its beginning.
    package mutating func released(residentPages pages: Int, releases: Int) {
        lastPages = pages
        releasesSeen = releases
    }

    /// The largest power of two not above `value` (1 for anything below 2).
    private static func powerOfTwo(atMost value: Int) -> Int {
        var power = 1
        while power * 2 <= value { power *= 2 }
        return power
    }
}
