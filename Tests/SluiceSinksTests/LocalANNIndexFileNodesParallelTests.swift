import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// The file graph's inserts side by side (session 37: `sluice_fgraph_add` with more than one thread, a lock a
/// node's lists, as hnswlib's): the graph built is as good as one thread's, and a batch that replaces labels or
/// names one twice ends with each label's last vector (new labels go side by side, the rest one at a time
/// after them). Behaviour only, never timing: which thread inserts what differs run to run, so the checks are
/// of what any order must give.
@Suite struct LocalANNIndexFileNodesParallelTests {
    typealias Nodes = LocalANNIndexFileNodesTests

    /// The share of `vectors` whose own vector finds their label first.
    static func selfRecall(_ index: LocalANNIndex, _ vectors: [[Float]]) -> Double {
        let found = vectors.indices.filter { index.search(vectors[$0], k: 1, breadth: 64).first?.label == UInt64($0) }
        return Double(found.count) / Double(vectors.count)
    }

    @Test(
        "two insert threads build a file graph as good as one thread's, before and after the codes are trained: every label found by its own vector, recall@10 within 0.02"
    )
    func twoThreadsBuildAsWellAsOne() throws {
        let folder = try Nodes.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Nodes.dimensions, clusters: 30, seed: 0x7A1)
        let vectors = generator.next(3000)
        let queries = generator.next(100)
        // Codes trained at 500 labels: the first run of inserts scores exactly, the rest by codes.
        let one = try Nodes.filled(folder, vectors, capacity: vectors.count, threads: 1)
        let two = try Nodes.filled(folder, vectors, capacity: vectors.count, threads: 2)
        #expect(two.elementCount == vectors.count)
        #expect(two.codeBytes == Nodes.codeBytes48)
        let selfOne = Self.selfRecall(one, vectors)
        let selfTwo = Self.selfRecall(two, vectors)
        #expect(selfTwo >= 0.99, "one thread \(selfOne), two \(selfTwo)")
        let recallOne = LocalANNIndexFileNodesClusteredTests.recall(one, vectors, queries, breadth: 96)
        let recallTwo = LocalANNIndexFileNodesClusteredTests.recall(two, vectors, queries, breadth: 96)
        #expect(recallTwo >= recallOne - 0.02, "recall@10 one thread \(recallOne), two \(recallTwo)")
    }

    @Test(
        "inserted side by side, no label is cut off: a search as broad as the graph finds every label by its own vector, batch after batch, with and without codes",
        arguments: [0, 24]
    )
    func everyLabelStaysReachable(codeBytes: Int) throws {
        let folder = try Nodes.folder()
        defer { TemporaryDirectory.remove(folder) }
        // Another insert can start its level-0 search at a node whose upper lists are linked and whose own
        // level-0 list is not yet written, link only to it, and be linked back by it: the node's list, written
        // next, must keep that link (session 37: it was overwritten, and the other node had no way in).
        for round in 0..<6 {
            var generator = ClusteredVectors(dimensions: Nodes.dimensions, clusters: 8, seed: 0x5EE + UInt64(round))
            let vectors = generator.next(1200)
            let settings = Nodes.settings(codeBytes: codeBytes, codesFrom: 300)
            let index = try LocalANNIndex(
                dimensions: Nodes.dimensions,
                capacity: 64,
                settings: settings,
                directory: folder
            )
            for start in stride(from: 0, to: vectors.count, by: 400) {
                try index.add((start..<start + 400).map { (UInt64($0), vectors[$0]) }, threads: 4)
            }
            let lost = vectors.indices.filter {
                index.search(vectors[$0], k: 1, breadth: 2 * vectors.count).first?.label != UInt64($0)
            }
            #expect(lost.isEmpty, "round \(round), code bytes \(codeBytes): \(lost.count) labels not found")
        }
    }

    @Test(
        "a batch inserted side by side that replaces labels present and names new labels twice: every label counted once, each found by its last vector and not by an earlier one"
    )
    func replacementsAndRepeatsKeepTheLastVector() throws {
        let folder = try Nodes.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Nodes.dimensions, clusters: 20, seed: 0x2EB)
        var vectors = generator.next(1000)
        let index = try Nodes.filled(folder, vectors, capacity: 2000, threads: 2)

        // One batch: 400 new labels, 100 of them named again later in the batch with other vectors, and 100
        // labels already present given other vectors — in an order that mixes them.
        var other = ClusteredVectors(dimensions: Nodes.dimensions, clusters: 7, seed: 0x0DD)
        let firstNew = (1000..<1400).map { (UInt64($0), generator.next()) }
        let repeated = (1000..<1100).map { (UInt64($0), other.next()) }
        let replaced = (0..<100).map { (UInt64($0), other.next()) }
        var batch: [(label: UInt64, vector: [Float])] = []
        for i in 0..<400 {
            batch.append(firstNew[i])
            if i % 4 == 1 { batch.append(replaced[i / 4]) }
            if i % 4 == 3 { batch.append(repeated[i / 4]) }
        }
        try index.add(batch, threads: 2)
        #expect(index.elementCount == 1400)
        #expect(index.deletedCount == 0)

        vectors += firstNew.map(\.1)
        for (label, vector) in repeated + replaced { vectors[Int(label)] = vector }
        for (label, vector) in repeated + replaced {
            #expect(index.search(vector, k: 1, breadth: 64).first?.label == label, "label \(label)")
        }
        for (label, vector) in firstNew.prefix(100) {
            #expect(index.search(vector, k: 1, breadth: 64).first?.label != label, "label \(label) by its first vector")
        }
        let untouched = Array(vectors[100..<1000]) + Array(vectors[1100..<1400])
        let labels = Array(100..<1000) + Array(1100..<1400)
        let foundFirst = zip(labels, untouched).filter {
            index.search($0.1, k: 1, breadth: 64).first?.label == UInt64($0.0)
        }
        #expect(Double(foundFirst.count) / Double(labels.count) >= 0.99)
    }
}
