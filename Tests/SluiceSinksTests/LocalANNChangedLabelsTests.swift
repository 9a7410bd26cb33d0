import Testing

@testable import SluiceSinks

/// The reader's kept answer of the change log: read once per pair of generations, read anew when either
/// generation moves, whatever the answer was (labels, or that the log could not say).
@Suite struct LocalANNChangedLabelsTests {
    @Test("one read per pair of generations; a new store or graph generation reads again")
    func readsOncePerPair() {
        let kept = LocalANNChangedLabels()
        var reads = 0
        func labels(_ graph: UInt64, _ store: UInt64, _ answer: Set<UInt64>?) -> Set<UInt64>? {
            kept.labels(graphGeneration: graph, storeGeneration: store) {
                reads += 1
                return answer
            }
        }
        #expect(labels(3, 5, [1, 2]) == [1, 2])
        #expect(labels(3, 5, [9]) == [1, 2], "the same pair: the kept labels, no read")
        #expect(reads == 1)
        #expect(labels(3, 6, [1, 2, 7]) == [1, 2, 7], "the store's generation moved")
        #expect(reads == 2)
        #expect(labels(6, 6, []) == [], "a newer graph")
        #expect(labels(6, 6, [4]) == [])
        #expect(reads == 3)
        #expect(labels(6, 9, nil) == nil, "a gap in the log is kept as such")
        #expect(labels(6, 9, [1]) == nil)
        #expect(reads == 4)
    }
}
