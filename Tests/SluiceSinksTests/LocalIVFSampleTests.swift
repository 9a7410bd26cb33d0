import CHNSW
import Foundation
import SluiceCore
import SluiceLMDB
import SluiceTesting
import Testing

@testable import SluiceSinks

/// The k-means sample held as the sampled records' labels (``LocalIVFSample``): its vectors are read from the
/// store, each exactly as its 8-bit code decodes (what a sample held as codes gave), in slot order.
@Suite struct LocalIVFSampleTests {
    @Test(
        "appended and replaced labels read their records' vectors as their codes decode, in slot order; a deleted record is skipped"
    )
    func readsFromTheStore() async throws {
        let folder = LocalSinkIVFTests.folder()
        defer { TemporaryDirectory.remove(folder) }
        let dimensions = 24
        var generator = ClusteredVectors(dimensions: dimensions, clusters: 3, seed: 0x51A)
        let vectors = generator.next(5).map { $0.map { $0 * 3 } }  // not unit: the codes normalize
        let sink = try LocalSinkIVFTests.open(folder, exactBelow: 1000)
        try await LocalSinkIVFTests.prepare(sink, dimensions: dimensions)
        try await sink.upsert(LocalSinkIVFTests.records(vectors))
        let labels = try sink.environment.database("ann-labels")
        let label = { (n: Int) in
            try sink.environment.read { txn in
                try #require(try txn.get(labels, Array(String(format: "v%06d", n).utf8)).map(LocalSink.number))
            }
        }
        var sample = LocalIVFSample(capacity: 4, dimensions: dimensions, environment: sink.environment)
        #expect(sample.bytes == 4 * 8, "8 bytes a vector, whatever its dimensions")
        for n in 0..<4 { sample.append(try label(n)) }
        sample.replace(2, with: try label(4))
        #expect(sample.count == 4)
        let decoded = { (n: Int) -> [Float] in
            var code = [UInt8](repeating: 0, count: sluice_ivf_code_bytes(dimensions))
            var row = [Float](repeating: 0, count: dimensions)
            sluice_ivf_encode(vectors[n], dimensions, &code)
            sluice_ivf_decode(code, 1, dimensions, &row)
            return row
        }
        var read: [Float] = []
        #expect(try sample.read(0..<4, into: &read) == 4)
        #expect(read == [0, 1, 4, 3].flatMap(decoded))
        for (slot, source) in [0, 1, 4, 3].enumerated() {
            let unit = LocalIVFTraining.unit(vectors[source])
            let step = unit.map(abs).max()! / 127
            let row = read[slot * dimensions..<(slot + 1) * dimensions]
            #expect(zip(row, unit).allSatisfy { abs($0 - $1) <= step / 2 + 1e-6 }, "slot \(slot)")
        }
        var one: [Float] = []
        #expect(try sample.read(3..<4, into: &one) == 1)
        #expect(one == decoded(3))
        try await sink.delete([VectorID(rawValue: "v000001")])
        #expect(try sample.read(0..<4, into: &read) == 3)
        #expect(Array(read.prefix(3 * dimensions)) == [0, 4, 3].flatMap(decoded))
    }
}
