import Foundation
import SluiceEmbed

/// What the MiniLM benchmark (`sluice-bench minilm`) measures beside the embedder: kept here, in the
/// benchmarks' executable, so that the library does not ship it.
extension MiniLMEmbedder {
    /// Floating-point operations of one forward pass over a sequence of `tokens` tokens: the dense
    /// products (Q, K, V, attention output, the two feed-forward layers) and attention's two products.
    static func forwardFLOPs(tokens n: Int) -> Double {
        let h = 384.0
        let wide = 1536.0
        let layers = 6.0
        let t = Double(n)
        let dense = 2 * t * h * (3 * h + h + 2 * wide)
        let attention = 4 * t * t * h
        return layers * (dense + attention)
    }

    /// The number of ids the model sees for each text (`[CLS]` and `[SEP]` included, after truncation).
    func sequenceLengths(_ texts: [String]) -> [Int] {
        texts.map { tokenizer.encode($0).count }
    }

    /// The sgemm rate, in GFLOP/s, of `threads` threads each multiplying matrices of the feed-forward
    /// layer's shape (2048 tokens × 384 → 1536) with single-threaded BLAS, as the embedder's workers do.
    static func measureSGEMMPeak(threads: Int, seconds: Double = 2) -> Double {
        BLAS.useOneThread()
        let m = 2048
        let n = 1536
        let k = 384
        let group = DispatchGroup()
        let tally = PeakTally()
        for _ in 0..<threads {
            group.enter()
            Thread.detachNewThread {
                let a = [Float](repeating: 0.5, count: m * k)
                let b = [Float](repeating: 0.25, count: n * k)
                var c = [Float](repeating: 0, count: m * n)
                let start = Date()
                var count = 0
                while Date().timeIntervalSince(start) < seconds {
                    c.withUnsafeMutableBufferPointer { c in
                        BLAS.multiplyTransposed(m: m, n: n, k: k, a, lda: k, b, ldb: k, beta: 0, c.baseAddress!, ldc: n)
                    }
                    count += 1
                }
                let time = Date().timeIntervalSince(start)
                tally.add(operations: Double(count) * 2 * Double(m * n * k), seconds: time)
                group.leave()
            }
        }
        group.wait()
        return tally.rate / 1e9
    }
}

/// Operations and the longest time of the sgemm threads.
private final class PeakTally: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var operations = 0.0
    private var seconds = 0.0

    func add(operations: Double, seconds: Double) {
        lock.lock()
        self.operations += operations
        self.seconds = max(self.seconds, seconds)
        lock.unlock()
    }

    var rate: Double {
        lock.lock()
        defer { lock.unlock() }
        return operations / seconds
    }
}
