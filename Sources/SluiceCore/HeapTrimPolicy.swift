/// When the ``ResidentMemoryReleaser``'s thread returns glibc's free heap to the kernel (pure: measurements
/// in, a decision out).
///
/// Every ``trimEvery`` ticks it trims (`malloc_trim(0)`). Between those, it trims at once when
/// ``thresholdBytes`` more than after the last trim lie free in the arenas — but it asks for that figure
/// (`mallinfo2()`, which walks every free chunk of every arena under the arena's lock: measured 0.7–0.8 ms a
/// call on a loaded local-store run, 0.15 CPU-s of an 18-second run at ten calls a second) only once the
/// process's anonymous resident memory has grown by ``thresholdBytes`` since the last trim or look: freed
/// memory that stays resident was resident before it was freed, so while anonymous memory has not grown by
/// that much, what a trim could return adds nothing above the level the last trim left (plus the threshold).
/// The anonymous resident size costs one `pread` of `/proc/self/statm` (about 2 µs).
package struct HeapTrimPolicy: Sendable {
    /// What the owner does next.
    package enum Action: Equatable, Sendable {
        /// Nothing this tick.
        case none
        /// Measure the free bytes in the arenas and report them with ``freeBytesMeasured(_:)``.
        case measureFree
        /// Trim the heap, then report with ``trimmed(freeBytes:anonymousBytes:)``.
        case trim
    }

    /// Ticks between two regular trims.
    package var trimEvery: Int
    /// Growth (free bytes, anonymous resident bytes) that triggers a look or a trim before the regular one.
    package var thresholdBytes: Int

    private var ticks = 0
    /// Free bytes in the arenas after the last trim, or the lowest seen since (nil: not measured yet).
    private var freeAfterTrim: Int?
    /// Anonymous resident bytes at the last trim or look.
    private var anonymousAtLook: Int?
    /// Looks at the arenas' free bytes so far (for tests and counts).
    package private(set) var looks = 0

    package init(trimEvery: Int = 5, thresholdBytes: Int = 4 << 20) {
        self.trimEvery = max(1, trimEvery)
        self.thresholdBytes = thresholdBytes
    }

    /// One tick of the releaser's thread, with the anonymous resident bytes just read (nil: unknown, which
    /// asks for a look every tick, as before this policy).
    package mutating func tick(anonymousBytes: Int?) -> Action {
        ticks += 1
        if ticks % trimEvery == 0 { return .trim }
        guard let anonymous = anonymousBytes else { return .measureFree }
        guard let reference = anonymousAtLook, anonymous < reference + thresholdBytes else {
            anonymousAtLook = anonymous
            return .measureFree
        }
        // Returned to the kernel or unmapped since: growth counts from here.
        if anonymous < reference { anonymousAtLook = anonymous }
        return .none
    }

    /// The free bytes a ``Action/measureFree`` found; returns whether to trim now (then report it with
    /// ``trimmed(freeBytes:anonymousBytes:)``).
    package mutating func freeBytesMeasured(_ free: Int) -> Bool {
        looks += 1
        guard let reference = freeAfterTrim else {
            freeAfterTrim = free
            return false
        }
        if free > reference + thresholdBytes { return true }
        if free < reference { freeAfterTrim = free }  // reused since: what is freed next counts from here
        return false
    }

    /// Records a trim just done: the arenas' free bytes after it (nil: not measured; the next look sets the
    /// reference) and the anonymous resident bytes after it.
    package mutating func trimmed(freeBytes: Int?, anonymousBytes: Int?) {
        freeAfterTrim = freeBytes
        anonymousAtLook = anonymousBytes
    }
}
