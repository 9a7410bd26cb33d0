import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// The graph reserves element slots ahead of its vectors, and hnswlib keeps resident memory for every slot
/// reserved (a mutex, a level, a visited-list entry). It grows by an eighth, not by doubling, so the idle
/// slots stay a small part of it however the vectors arrive — and the graph answers the same after growing.
@Suite struct LocalANNIndexCapacityTests {
    @Test(
        "grown batch by batch from 1,024 slots to 20,000 vectors, the graph never reserves more than an eighth (or 1,024 slots) above what it holds",
        arguments: [250, 4096]
    )
    func growsByBoundedSteps(batch: Int) throws {
        var generator = ClusteredVectors(dimensions: 16, clusters: 20, seed: 0xCA9A)
        var section = PipelineConfiguration.Sink()
        section.hnsw.efConstruction = 40
        let index = try LocalANNIndex(dimensions: 16, capacity: 1024, settings: .init(section: section))
        var vectors: [[Float]] = []
        while vectors.count < 20_000 {
            let next = generator.next(batch)
            let first = UInt64(vectors.count)
            try index.add(next.enumerated().map { (first + UInt64($0.offset), $0.element) }, threads: 2)
            vectors += next
            let held = index.elementCount
            #expect(held == vectors.count)
            #expect(index.capacity >= held)
            #expect(
                index.capacity <= held + max(held / 8, 1024),
                "\(index.capacity) slots reserved for \(held) vectors"
            )
        }
        // Growing kept the graph whole: every 97th vector finds itself first.
        for label in stride(from: 0, to: vectors.count, by: 97) {
            let found = index.search(vectors[label], k: 1, breadth: 64)
            #expect(found.first?.label == UInt64(label))
        }
    }
}
