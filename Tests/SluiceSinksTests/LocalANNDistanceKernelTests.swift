import CHNSW
import Foundation
import SluiceTesting
import Testing

/// The graph's 8-bit distance has one kernel per instruction set (`CHNSW`: AVX-512 VNNI, AVX2, plain C++),
/// chosen at run time. Each is forced here by name: every one this CPU runs must give the very same distance
/// (the integer dot product is exact in each, and the final rounding is the same), so a graph is the same
/// graph whichever CPU built it.
@Suite struct LocalANNDistanceKernelTests {
    static let kernels: [Int32] = [
        Int32(SLUICE_HNSW_KERNEL_PORTABLE.rawValue), Int32(SLUICE_HNSW_KERNEL_AVX2.rawValue),
        Int32(SLUICE_HNSW_KERNEL_AVX512_VNNI.rawValue),
    ]

    static func distance(_ a: [Float], _ b: [Float], kernel: Int32) -> Float {
        sluice_hnsw_quantized_distance(a, b, a.count, kernel)
    }

    @Test(
        "every kernel this CPU runs gives the portable kernel's distance, bit for bit, at every dimension and at the 8-bit extremes",
        arguments: [1, 2, 31, 32, 33, 63, 64, 65, 100, 128, 384, 1536]
    )
    func kernelsAgree(dimensions: Int) throws {
        var generator = ClusteredVectors(dimensions: dimensions, clusters: 3, spread: 0.5, seed: UInt64(dimensions))
        var pairs = (0..<50).map { _ in (generator.next(), generator.next()) }
        // Components at ±127 after quantizing (every |value| equal), with mixed signs: the largest products.
        let alternating = (0..<dimensions).map { Float($0 % 2 == 0 ? 1 : -1) }
        let thirds = (0..<dimensions).map { Float($0 % 3 == 0 ? 1 : -1) }
        pairs += [(alternating, thirds), (alternating, alternating), (alternating, alternating.map { -$0 })]
        var ran = 0
        for kernel in Self.kernels.dropFirst() {
            guard !Self.distance(pairs[0].0, pairs[0].1, kernel: kernel).isNaN else { continue }  // not this CPU
            ran += 1
            for (a, b) in pairs {
                let portable = Self.distance(a, b, kernel: Self.kernels[0])
                let wide = Self.distance(a, b, kernel: kernel)
                #expect(wide.bitPattern == portable.bitPattern, "kernel \(kernel), \(dimensions) dimensions")
            }
        }
        #expect(ran >= 1 || !Self.isX86, "an x86-64 CPU runs the AVX2 kernel at least")
        // Same and opposite directions at the extremes: distance 0 and 2.
        #expect(abs(Self.distance(alternating, alternating, kernel: Self.kernels[0])) < 1e-5)
        #expect(abs(Self.distance(alternating, alternating.map { -$0 }, kernel: Self.kernels[0]) - 2) < 1e-5)
    }

    @Test(
        "every kernel this CPU runs builds the portable kernel's product-quantizer table, bit for bit, whatever the sub-space's width, and at the 8-bit extremes",
        arguments: [(48, 12), (48, 3), (384, 96), (384, 24), (384, 48), (1536, 96)]
    )
    func tableKernelsAgree(dimensions: Int, codeBytes: Int) throws {
        var generator = ClusteredVectors(dimensions: dimensions, clusters: 5, spread: 0.5, seed: UInt64(codeBytes))
        let sample = generator.next(300)
        let flat = sample.flatMap { $0 }
        var queries = generator.next(10)
        queries.append((0..<dimensions).map { Float($0 % 2 == 0 ? 1 : -1) })  // every value at ±127
        queries.append((0..<dimensions).map { Float($0 % 3 == 0 ? -1 : 1) })
        func table(_ query: [Float], kernel: Int32) -> [Float]? {
            var out = [Float](repeating: .nan, count: codeBytes * 256)
            let written = sluice_pq_table(flat, sample.count, dimensions, codeBytes, query, kernel, &out)
            return written == 0 ? nil : out
        }
        var ran = 0
        for query in queries {
            let portable = try #require(table(query, kernel: Self.kernels[0]), "the portable kernel runs everywhere")
            #expect(portable.allSatisfy { $0.isFinite })
            #expect(portable.contains { $0 != 0 })
            for kernel in Self.kernels.dropFirst() {
                guard let wide = table(query, kernel: kernel) else { continue }  // not this CPU
                ran += 1
                let differ = wide.indices.filter { wide[$0].bitPattern != portable[$0].bitPattern }
                #expect(
                    differ.isEmpty,
                    "kernel \(kernel): \(differ.count) of \(wide.count) differ, the first \(differ.first ?? 0)"
                )
            }
        }
        #expect(ran >= queries.count || !Self.isX86, "an x86-64 CPU runs the AVX2 kernel at least")
        var refused = [Float](repeating: 0, count: 5 * 256)
        let refusedCount = sluice_pq_table(flat, sample.count, dimensions, 5, queries[0], 0, &refused)
        #expect(refusedCount == 0, "5 bytes fit no sub-space width")
    }

    @Test("the graph uses the widest kernel this CPU runs, unless SLUICE_HNSW_VECTOR_WIDTH lowers it")
    func widestKernelIsChosen() throws {
        let chosen = sluice_hnsw_distance_kernel()
        let a: [Float] = [1, 2, 3, 4]
        #expect(!Self.distance(a, a, kernel: chosen).isNaN, "the chosen kernel runs here")
        if ProcessInfo.processInfo.environment["SLUICE_HNSW_VECTOR_WIDTH"] == nil {
            for kernel in Self.kernels where kernel > chosen {
                #expect(Self.distance(a, a, kernel: kernel).isNaN, "kernel \(kernel) runs here but was not chosen")
            }
        }
        #expect(Self.distance(a, a, kernel: 99).isNaN, "an unknown kernel")
    }

    #if arch(x86_64)
    static let isX86 = true
    #else
    static let isX86 = false
    #endif
}
