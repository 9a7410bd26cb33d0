import SluiceTesting
import Testing

@testable import SluiceSinks

/// The k-means sample held as 8-bit codes (``LocalIVFSample``): what goes in comes out as its unit vector, up
/// to the codes' rounding, in its slot.
@Suite struct LocalIVFSampleTests {
    @Test("appended and replaced vectors decode to their unit vectors within half a code step, in their slots")
    func roundTrip() {
        let dimensions = 24
        var generator = ClusteredVectors(dimensions: dimensions, clusters: 3, seed: 0x51A)
        let vectors = generator.next(5).map { $0.map { $0 * 3 } }  // not unit: the codes normalize
        var sample = LocalIVFSample(capacity: 4, dimensions: dimensions)
        #expect(sample.bytes == 4 * (dimensions + 4))
        for vector in vectors.prefix(4) { sample.append(vector) }
        sample.replace(2, with: vectors[4])
        #expect(sample.count == 4)
        var decoded: [Float] = []
        sample.decode(0..<4, into: &decoded)
        #expect(decoded.count == 4 * dimensions)
        for (slot, source) in [0, 1, 4, 3].enumerated() {
            let unit = LocalIVFTraining.unit(vectors[source])
            let step = unit.map(abs).max()! / 127
            let row = decoded[slot * dimensions..<(slot + 1) * dimensions]
            #expect(zip(row, unit).allSatisfy { abs($0 - $1) <= step / 2 + 1e-6 }, "slot \(slot)")
        }
        var one: [Float] = []
        sample.decode(3..<4, into: &one)
        #expect(one == Array(decoded[3 * dimensions..<4 * dimensions]))
    }
}
