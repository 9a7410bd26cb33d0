import Foundation

/// A first-in, first-out queue that threads block on: the one blocking queue of the code base, used
/// where the consumers are threads of our own rather than tasks (``BlockingExecutor``'s work queue, the
/// extract worker pool's job queue and the answers its submitters wait for).
///
/// - ``append(_:)`` never blocks; it returns a ``Ticket`` with which an element that no thread took yet
///   can be taken back (``remove(_:)``: a cancelled submission leaves nothing behind).
/// - ``take()`` blocks until an element is there, and returns nil once the queue is closed and empty, so
///   consumers finish what was queued before they stop.
/// - ``close()`` refuses further elements and wakes every waiting thread.
///
/// Tasks must not call the blocking methods (they would hold a thread of Swift's cooperative pool).
package final class BlockingQueue<Element: Sendable>: @unchecked Sendable {
    /// Names one appended element, for ``remove(_:)``.
    package struct Ticket: Hashable, Sendable {
        fileprivate let id: UInt64
    }

    /// What ``take(before:)`` found.
    package enum TakeResult: Sendable {
        case element(Element)
        /// The deadline passed with the queue empty.
        case timedOut
        /// The queue is closed and empty.
        case closed
    }

    // Guarded by `condition`.
    private let condition = NSCondition()
    /// Slots from `head` on; a removed element leaves a nil slot (so that a finished job's closure, which
    /// holds its inputs and results, does not outlive it).
    private var slots: [(id: UInt64, element: Element?)] = []
    private var head = 0
    private var waiting = 0
    private var lastID: UInt64 = 0
    private var closed = false

    package init() {}

    /// Elements queued and not yet taken.
    package var count: Int { condition.withLock { waiting } }

    /// Whether ``close()`` was called.
    package var isClosed: Bool { condition.withLock { closed } }

    /// Appends `element` and wakes one waiting thread.
    /// - Returns: the element's ticket, or nil if the queue is closed (the element is not queued).
    @discardableResult
    package func append(_ element: Element) -> Ticket? {
        condition.withLock {
            if closed { return nil }
            lastID += 1
            slots.append((lastID, element))
            waiting += 1
            condition.signal()
            return Ticket(id: lastID)
        }
    }

    /// Takes back an element no thread has taken yet.
    /// - Returns: the element, or nil if it was already taken (or removed).
    package func remove(_ ticket: Ticket) -> Element? {
        condition.withLock {
            // Ids increase along the slots: search only the part not yet taken.
            guard let index = slots[head...].firstIndex(where: { $0.id == ticket.id }),
                let element = slots[index].element
            else {
                return nil
            }
            slots[index].element = nil
            waiting -= 1
            compact()
            return element
        }
    }

    /// The next element, waiting for one; nil once the queue is closed and empty.
    package func take() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while waiting == 0 && !closed { condition.wait() }
        return popFirst()
    }

    /// The next element, waiting for one until `deadline` at most.
    package func take(before deadline: ContinuousClock.Instant) -> TakeResult {
        condition.lock()
        defer { condition.unlock() }
        while waiting == 0 && !closed {
            let left = ContinuousClock.now.duration(to: deadline)
            if left <= .zero { return .timedOut }
            let seconds = Double(left.components.seconds) + Double(left.components.attoseconds) * 1e-18
            _ = condition.wait(until: Date(timeIntervalSinceNow: seconds))
        }
        return popFirst().map(TakeResult.element) ?? .closed
    }

    /// Refuses further elements; threads waiting in ``take()`` get what is left, then nil.
    package func close() {
        condition.withLock {
            closed = true
            condition.broadcast()
        }
    }

    /// Under the lock: the first element still queued, or nil when there is none.
    private func popFirst() -> Element? {
        while head < slots.count {
            let element = slots[head].element
            slots[head].element = nil
            head += 1
            if let element {
                waiting -= 1
                compact()
                return element
            }
        }
        compact()
        return nil
    }

    private func compact() {
        if head == slots.count {
            slots.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 1024 && head * 2 > slots.count {
            slots.removeFirst(head)
            head = 0
        }
    }
}
