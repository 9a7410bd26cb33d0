import Foundation
import SluiceTesting

/// `sluice-bench local-ivf --clustered N`: the base and the queries of `sluice-bench local-search` (the same
/// clustered unit vectors, the same seed: the queries are the vectors that follow the base), generated a batch
/// at a time so that the benchmark never holds the base, and the exact k-th best score of each query computed
/// while the base streams by (a float scan of every vector: the truth, as the store's exact scan would give it,
/// without scanning a million-vector store once per query).
extension LocalIVFBench {
    /// The generator `local-search` uses for `count` vectors.
    static func clusteredGenerator(_ count: Int, dimensions: Int, clusters: Int?, spread: Float) -> ClusteredVectors {
        ClusteredVectors(
            dimensions: dimensions,
            clusters: clusters ?? max(10, count / 100),
            spread: spread,
            seed: 0x10CA_15EA
        )
    }

    /// The `queries` vectors that follow the first `count` of `generator` (generated and dropped).
    static func clusteredQueries(_ generator: ClusteredVectors, after count: Int, queries: Int) -> [[Float]] {
        var scout = generator
        for first in stride(from: 0, to: count, by: 4096) { _ = scout.next(min(4096, count - first)) }
        return scout.next(queries)
    }

    /// The exact k best inner products of each query over the vectors added so far (unit vectors: cosine).
    struct ExactBest {
        let k: Int
        let dimensions: Int
        /// The queries, one after the other.
        private let queries: [Float]
        /// Each query's best k so far, ascending.
        private(set) var best: [[Float]]

        init(queries: [[Float]], k: Int) {
            self.k = k
            dimensions = queries.first?.count ?? 0
            self.queries = queries.flatMap { $0 }
            best = Array(repeating: [], count: queries.count)
        }

        /// The k-th best score of each query (−∞ when fewer than k vectors were added).
        var kth: [Float] { best.map { $0.count == k ? $0[0] : -.infinity } }

        mutating func add(_ vectors: [[Float]]) {
            let flat = vectors.flatMap { $0 }
            let (count, dimensions, k) = (vectors.count, dimensions, k)
            queries.withUnsafeBufferPointer { queries in
                flat.withUnsafeBufferPointer { rows in
                    for query in 0..<best.count {
                        let q = queries.baseAddress! + query * dimensions
                        var mine = best[query]
                        for row in 0..<count {
                            let score = Self.dot(q, rows.baseAddress! + row * dimensions, dimensions)
                            guard mine.count < k || score > mine[0] else { continue }
                            if mine.count == k { mine.removeFirst() }
                            mine.insert(score, at: mine.firstIndex { $0 > score } ?? mine.count)
                        }
                        best[query] = mine
                    }
                }
            }
        }

        private static func dot(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ count: Int) -> Float {
            var sum = SIMD16<Float>()
            var index = 0
            let (rawA, rawB) = (UnsafeRawPointer(a), UnsafeRawPointer(b))
            while index + 16 <= count {
                let x = rawA.loadUnaligned(fromByteOffset: index * 4, as: SIMD16<Float>.self)
                let y = rawB.loadUnaligned(fromByteOffset: index * 4, as: SIMD16<Float>.self)
                sum += x * y
                index += 16
            }
            var total = sum.sum()
            while index < count {
                total += a[index] * b[index]
                index += 1
            }
            return total
        }
    }

    /// The store folder's bytes (every file under it, as `ls` gives their sizes).
    static func folderBytes(_ folder: URL) -> Int {
        let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.fileSizeKey])
        var total = 0
        while let file = files?.nextObject() as? URL {
            total += (try? file.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0
        }
        return total
    }

    /// The process's peak resident memory so far (`VmHWM`), in MB.
    static func peakResidentMB() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
        else { return 0 }
        return Double(line.split(separator: " ").dropFirst().first.flatMap { Double($0) } ?? 0) / 1024
    }
}
