/// A fixed-size log-scale histogram of durations (flat memory however many samples): buckets grow by
/// ~19% from 1 µs to ~30 min, so percentiles are within ~10%.
public struct LatencyHistogram: Sendable, Hashable {
    private static let bucketCount = 128
    private static let growth = 1.1892071150027210  // 2^(1/4)
    private var buckets = [UInt64](repeating: 0, count: LatencyHistogram.bucketCount)
    public private(set) var count: UInt64 = 0
    public private(set) var maximum: Double = 0

    public init() {}

    /// Records one duration in seconds.
    public mutating func record(_ seconds: Double) {
        let micros = max(seconds * 1e6, 1)
        let index = min(Int((log(micros) / log(Self.growth)).rounded(.down)), Self.bucketCount - 1)
        buckets[max(index, 0)] += 1
        count += 1
        maximum = max(maximum, seconds)
    }

    public mutating func merge(_ other: LatencyHistogram) {
        for i in 0..<Self.bucketCount { buckets[i] += other.buckets[i] }
        count += other.count
        maximum = max(maximum, other.maximum)
    }

    /// The `p`-quantile (0…1) in seconds (upper bound of its bucket), or 0 with no samples.
    public func quantile(_ p: Double) -> Double {
        guard count > 0 else { return 0 }
        let rank = UInt64((Double(count) * p).rounded(.up))
        var seen: UInt64 = 0
        for (i, n) in buckets.enumerated() {
            seen += n
            if seen >= max(rank, 1) {
                return min(pow(Self.growth, Double(i + 1)) / 1e6, maximum)
            }
        }
        return maximum
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
