import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// The graph with its nodes in a file before its codes are trained (session 34): the first records are held in
/// memory as well, read from there and written through to the file. What is written must reach the file — a
/// graph saved then loaded answers as the writing graph did, deletes and replaces included — and the copy is
/// let go once the codes are trained. Behaviour only, never timing.
@Suite struct LocalANNIndexFileNodesEarlyTests {
    typealias Nodes = LocalANNIndexFileNodesTests

    @Test(
        "before the codes are trained, inserts, deletes and replaces reach the file: a loaded copy answers alike, before and after both train, and the records held in memory are let go"
    )
    func earlyWritesReachTheFile() throws {
        let folder = try Nodes.folder()
        defer { TemporaryDirectory.remove(folder) }
        let settings = Nodes.settings(codesFrom: 1000)
        var generator = ClusteredVectors(dimensions: Nodes.dimensions, clusters: 20, seed: 0xEA41)
        let index = try Nodes.filled(folder, generator.next(800), settings: settings)
        #expect(index.codeBytes == 0, "800 labels: not yet trained")
        for label in stride(from: 0, to: 800, by: 9) { #expect(try index.markDeleted(UInt64(label))) }
        // Replaces of live labels and of deleted ones, still before the training.
        let replaced: [UInt64] = [1, 9, 18, 400, 799]
        try index.add(replaced.map { ($0, generator.next()) }, threads: 1)

        let file = folder.appendingPathComponent("graph-1.nodes")
        try index.save(to: file)
        let loaded = try LocalANNIndex(loading: file, dimensions: Nodes.dimensions, settings: settings)
        #expect(loaded.codeBytes == 0)
        #expect(loaded.deletedCount == index.deletedCount)
        let queries = generator.next(25)
        let answers = { (graph: LocalANNIndex) in queries.map { graph.search($0, k: 10, breadth: 48).map(\.label) } }
        #expect(answers(loaded) == answers(index), "the file differs from what the writing graph reads")
        // Taken after searches: the graph keeps a search's scratch for the next one and counts it (session 34).
        let untrainedBytes = index.memoryBytes

        // Both go on past codes_from (the loaded one holds its file's first records from its first write on)
        // and train from the same records.
        let more = generator.next(300).enumerated().map { (UInt64(800 + $0.offset), $0.element) }
        try index.add(more, threads: 1)
        try loaded.add(more, threads: 1)
        #expect(index.codeBytes == Nodes.codeBytes48)
        #expect(loaded.codeBytes == Nodes.codeBytes48)
        #expect(answers(loaded) == answers(index))
        #expect(
            index.memoryBytes < untrainedBytes,
            "\(index.memoryBytes) bytes trained against \(untrainedBytes) with the first records held"
        )
    }
}
