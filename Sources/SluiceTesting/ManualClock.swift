import Synchronization

/// A clock that moves only when a test advances it: code generic over `Clock` (linger, backoff, rate
/// budgets) is tested without waiting and without depending on the machine's speed.
///
/// A sleeper is resumed when ``advance(by:)`` or ``advance(to:)`` reaches its deadline, or at once when the
/// deadline has passed; a cancelled sleeper throws `CancellationError`. ``sleepers`` and
/// ``deadlines`` let a test wait until the code under test is suspended, and see on what.
public final class ManualClock: Clock, Sendable {
    public struct Instant: InstantProtocol, Sendable, Hashable {
        public typealias Duration = Swift.Duration
        /// Time since the clock's start.
        public var offset: Duration

        public init(offset: Duration) { self.offset = offset }

        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var nextID: UInt64 = 0
        var sleepers: [UInt64: Sleeper] = [:]
        /// Sleepers with an id but no continuation yet, and those of them cancelled already.
        var pending: Set<UInt64> = []
        var cancelled: Set<UInt64> = []
        /// Every `sleep(until:)` call so far.
        var sleepCalls = 0
    }

    private let state = Mutex(State())

    public init() {}

    public var now: Instant { state.withLock { $0.now } }
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// Sleepers suspended now.
    public var sleepers: Int { state.withLock { $0.sleepers.count } }
    /// Their deadlines, earliest first.
    public var deadlines: [Instant] { state.withLock { $0.sleepers.values.map(\.deadline).sorted() } }
    /// How many times `sleep(until:tolerance:)` was called.
    public var sleepCalls: Int { state.withLock { $0.sleepCalls } }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            state.sleepCalls += 1
            state.pending.insert(state.nextID)
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Result<Void, any Error>? in
                    state.pending.remove(id)
                    if state.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let sleeper = state.sleepers.removeValue(forKey: id) else {
                    if state.pending.remove(id) != nil { state.cancelled.insert(id) }
                    return nil
                }
                return sleeper
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    public func advance(by duration: Duration) {
        advance(to: now.advanced(by: duration))
    }

    /// Moves the clock to `instant` (never back) and resumes the sleepers whose deadline it reached.
    public func advance(to instant: Instant) {
        let due = state.withLock { state -> [Sleeper] in
            state.now = max(state.now, instant)
            let now = state.now
            let due = state.sleepers.filter { $0.value.deadline <= now }
            for id in due.keys { state.sleepers.removeValue(forKey: id) }
            return Array(due.values)
        }
        for sleeper in due { sleeper.continuation.resume() }
    }
}
