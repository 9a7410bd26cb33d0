import Testing

@testable import SluiceState

/// Which of two manifests of one index's generations a later change made (``GenerationManifest/isLater(than:)``):
/// a state's own and the store's copy are compared by it, so that an older one is never written over a later one.
@Suite struct GenerationManifestOrderTests {
    @Test("more changes counted is later, whatever the generation numbers")
    func countedChangesOrder() {
        var older = GenerationManifest()
        older.changes = 3
        older.next = 5
        var later = older
        later.changes = 4
        later.next = 2
        #expect(later.isLater(than: older))
        #expect(!older.isLater(than: later))
    }

    @Test("manifests written before the count: a later generation started, then a later switch")
    func legacyOrder() {
        var first = GenerationManifest()
        first.next = 2
        first.switchedAt = 100
        var started = first
        started.next = 3
        var switched = first
        switched.switchedAt = 200
        #expect(started.isLater(than: first))
        #expect(switched.isLater(than: first))
        #expect(!first.isLater(than: started) && !first.isLater(than: switched))
        // A count written by a change is later than any manifest written before the count at the same next.
        var counted = first
        counted.changes = 1
        #expect(counted.isLater(than: first))
    }

    @Test("a manifest is never later than itself, and two the order does not tell apart are neither")
    func ties() {
        var one = GenerationManifest()
        one.changes = 2
        #expect(!one.isLater(than: one))
        var other = one
        other.candidate = GenerationManifest.Generation(id: "g1")
        #expect(!one.isLater(than: other) && !other.isLater(than: one))
    }
}
