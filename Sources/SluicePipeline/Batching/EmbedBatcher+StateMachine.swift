/// Forms embedding batches: a batch closes when it reaches the count limit, when the next text would
/// push it over the token limit or the request-bytes limit, or when its oldest text has waited `linger`.
///
/// Pure: time comes in as an argument, actions come out.
struct EmbedBatcherStateMachine<Item, Instant: InstantProtocol> {
    let maxCount: Int
    let maxTokens: Int
    let maxBytes: Int
    let linger: Instant.Duration
    private(set) var pending: [Item] = []
    private(set) var pendingTokens = 0
    private(set) var pendingBytes = 0
    private(set) var oldest: Instant?

    init(maxCount: Int, maxTokens: Int, maxBytes: Int = .max, linger: Instant.Duration) {
        precondition(maxCount >= 1 && maxTokens >= 1 && maxBytes >= 1)
        self.maxCount = maxCount
        self.maxTokens = maxTokens
        self.maxBytes = maxBytes
        self.linger = linger
    }

    /// Batches ready to send, in order (none, one, or two when the new item itself closes a batch).
    mutating func add(_ item: Item, tokens: Int, bytes: Int = 0, now: Instant) -> [[Item]] {
        var ready: [[Item]] = []
        if !pending.isEmpty && (pendingTokens + tokens > maxTokens || pendingBytes + bytes > maxBytes) {
            ready.append(takeAll())
        }
        if pending.isEmpty { oldest = now }
        pending.append(item)
        pendingTokens += tokens
        pendingBytes += bytes
        if pending.count >= maxCount || pendingTokens >= maxTokens || pendingBytes >= maxBytes {
            ready.append(takeAll())
        }
        return ready
    }

    /// When the pending batch must be sent (nil when there is none).
    var deadline: Instant? { oldest.map { $0.advanced(by: linger) } }

    /// The pending batch if its linger has run out at `now`.
    mutating func expire(now: Instant) -> [Item]? {
        guard let deadline, now >= deadline, !pending.isEmpty else { return nil }
        return takeAll()
    }

    /// Whatever is pending (at the end of input).
    mutating func flush() -> [Item]? {
        pending.isEmpty ? nil : takeAll()
    }

    private mutating func takeAll() -> [Item] {
        let batch = pending
        pending = []
        pendingTokens = 0
        pendingBytes = 0
        oldest = nil
        return batch
    }
}
