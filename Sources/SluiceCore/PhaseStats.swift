/// What one stage did during a run.
public struct PhaseStats: Sendable, Hashable, Codable {
    public var name: String
    public var itemsIn: Int = 0
    public var itemsOut: Int = 0
    public var bytes: Int = 0
    /// Wall-clock seconds from taking a document to having its result (summed over the stage's workers):
    /// work, and also waiting inside it — for a thread of a blocking executor, for another document's
    /// extraction of the same bytes, for a core.
    public var busySeconds: Double = 0
    /// CPU seconds of the work itself, on the threads that did it (this process's; summed over workers);
    /// nil for a stage that does not measure it.
    public var cpuSeconds: Double?
    /// Seconds spent waiting for upstream (summed over workers).
    public var starvedSeconds: Double = 0
    /// Seconds spent waiting for downstream to make room (summed over workers).
    public var blockedSeconds: Double = 0
    public var workers: Int = 1
    public var latency = LatencyHistogram()
    /// Percentiles read back from JSON (the histogram itself is not serialized).
    private var decodedQuantiles: [Double: Double] = [:]

    /// The `p`-quantile of per-item latency in seconds (0.5, 0.95, 0.99), from the histogram or, for stats
    /// read from JSON, from the stored percentiles.
    public func latencyQuantile(_ p: Double) -> Double {
        latency.count > 0 ? latency.quantile(p) : decodedQuantiles[p] ?? 0
    }

    public init(name: String, workers: Int = 1) {
        self.name = name
        self.workers = workers
    }

    public mutating func merge(_ other: PhaseStats) {
        itemsIn += other.itemsIn
        itemsOut += other.itemsOut
        bytes += other.bytes
        busySeconds += other.busySeconds
        if let cpu = other.cpuSeconds { cpuSeconds = (cpuSeconds ?? 0) + cpu }
        starvedSeconds += other.starvedSeconds
        blockedSeconds += other.blockedSeconds
        latency.merge(other.latency)
    }

    enum CodingKeys: String, CodingKey {
        case name
        case itemsIn = "items_in"
        case itemsOut = "items_out"
        case bytes
        case busySeconds = "busy_s"
        case cpuSeconds = "cpu_s"
        case starvedSeconds = "starved_s"
        case blockedSeconds = "blocked_s"
        case workers
        case p50 = "latency_p50_s"
        case p95 = "latency_p95_s"
        case p99 = "latency_p99_s"
        case max = "latency_max_s"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        itemsIn = try c.decode(Int.self, forKey: .itemsIn)
        itemsOut = try c.decode(Int.self, forKey: .itemsOut)
        bytes = try c.decode(Int.self, forKey: .bytes)
        busySeconds = try c.decode(Double.self, forKey: .busySeconds)
        cpuSeconds = try c.decodeIfPresent(Double.self, forKey: .cpuSeconds)
        starvedSeconds = try c.decode(Double.self, forKey: .starvedSeconds)
        blockedSeconds = try c.decode(Double.self, forKey: .blockedSeconds)
        workers = try c.decode(Int.self, forKey: .workers)
        decodedQuantiles = [
            0.5: try c.decodeIfPresent(Double.self, forKey: .p50) ?? 0,
            0.95: try c.decodeIfPresent(Double.self, forKey: .p95) ?? 0,
            0.99: try c.decodeIfPresent(Double.self, forKey: .p99) ?? 0,
        ]
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(itemsIn, forKey: .itemsIn)
        try c.encode(itemsOut, forKey: .itemsOut)
        try c.encode(bytes, forKey: .bytes)
        try c.encode(busySeconds, forKey: .busySeconds)
        try c.encodeIfPresent(cpuSeconds, forKey: .cpuSeconds)
        try c.encode(starvedSeconds, forKey: .starvedSeconds)
        try c.encode(blockedSeconds, forKey: .blockedSeconds)
        try c.encode(workers, forKey: .workers)
        try c.encode(latencyQuantile(0.5), forKey: .p50)
        try c.encode(latencyQuantile(0.95), forKey: .p95)
        try c.encode(latencyQuantile(0.99), forKey: .p99)
        try c.encode(latency.maximum, forKey: .max)
    }
}
