/// The bookkeeping of tasks suspended on continuations until a change, where a task's cancellation ends its
/// own wait: pure (no tasks, no lock), so each case is tested alone; ``CancellableWaiters`` carries out
/// its actions under a lock.
///
/// A wait has three steps, because a task can be cancelled between any two: ``reserve()`` gives it an id,
/// ``park(_:_:ready:)`` hands over its continuation, and ``resumeAll()`` (a change) or ``cancel(_:)`` (its
/// task's cancellation) hands the continuation back, exactly once, to be resumed.
package struct CancellableWaitersStateMachine<Continuation> {
    package typealias ID = UInt64

    package enum ParkAction {
        /// Resume the continuation at once: the condition already holds, or the task was cancelled first.
        case resume(Continuation)
        /// The continuation waits for a change or the task's cancellation.
        case parked
    }

    package enum CancelAction {
        /// Resume the continuation: the cancelled task was parked.
        case resume(Continuation)
        /// Nothing to do: the task has not parked yet (its park resumes at once) or was resumed already.
        case none
    }

    private var nextID: ID = 0
    /// Ids handed out whose continuation has not been parked yet.
    private var reserved: Set<ID> = []
    /// Reserved ids whose task was cancelled before it parked.
    private var cancelledEarly: Set<ID> = []
    /// Parked continuations, in the order they parked (the order ``resumeAll()`` hands them back in).
    private var parked: [(id: ID, continuation: Continuation)] = []

    package init() {}

    /// How many continuations are parked.
    package var waiting: Int { parked.count }

    /// A new waiter's id.
    package mutating func reserve() -> ID {
        nextID &+= 1
        reserved.insert(nextID)
        return nextID
    }

    /// Parks the continuation of waiter `id`, unless `ready` (its condition holds already) or its task was
    /// cancelled in between.
    package mutating func park(_ id: ID, _ continuation: Continuation, ready: Bool) -> ParkAction {
        reserved.remove(id)
        if cancelledEarly.remove(id) != nil || ready { return .resume(continuation) }
        parked.append((id, continuation))
        return .parked
    }

    /// The task of waiter `id` was cancelled.
    package mutating func cancel(_ id: ID) -> CancelAction {
        if let index = parked.firstIndex(where: { $0.id == id }) {
            return .resume(parked.remove(at: index).continuation)
        }
        if reserved.contains(id) { cancelledEarly.insert(id) }
        return .none
    }

    /// A change: every parked continuation, in the order they parked, to be resumed.
    package mutating func resumeAll() -> [Continuation] {
        defer { parked = [] }
        return parked.map(\.continuation)
    }
}

extension CancellableWaitersStateMachine: Sendable where Continuation: Sendable {}
extension CancellableWaitersStateMachine.ParkAction: Sendable where Continuation: Sendable {}
extension CancellableWaitersStateMachine.CancelAction: Sendable where Continuation: Sendable {}
