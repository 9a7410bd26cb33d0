import Synchronization

/// The bounded buffer between two stages: many producers, many consumers, and a full buffer
/// **suspends** the producer — nothing is ever dropped.
///
/// Why not swift-async-algorithms' `MultiProducerSingleConsumerAsyncChannel`: a stage is a pool of
/// workers that all consume from one buffer, and that channel has a single consumer and a `~Copyable`
/// source that cannot be shared across a task group. The decisions live in
/// ``StageChannelStateMachine``; this type only carries them out under a lock.
package final class StageChannel<Element: Sendable>: Sendable {
    private typealias Machine = StageChannelStateMachine<Element, CheckedContinuation<Void, Never>, CheckedContinuation<ReceiveResult, Never>>

    package enum ReceiveResult: Sendable {
        case element(Element)
        case timedOut
        case finished
    }

    private struct Locked {
        var machine: Machine
        var nextID = 0
    }

    private let state: Mutex<Locked>
    package let capacity: Int

    /// - Parameters:
    ///   - capacity: elements buffered before senders suspend.
    ///   - producers: how many producers will call ``finish()``; the channel ends after the last.
    package init(capacity: Int, producers: Int = 1) {
        self.capacity = capacity
        state = Mutex(Locked(machine: Machine(capacity: capacity, producers: producers)))
    }

    /// Elements buffered now.
    package var count: Int { state.withLock { $0.machine.count } }
    /// The most elements ever buffered at once.
    package var highWater: Int { state.withLock { $0.machine.highWater } }

    /// Sends an element, suspending while the buffer is full.
    /// - Returns: whether the sender had to wait (for blocked-time statistics).
    @discardableResult
    package func send(_ element: Element) async -> Bool {
        var suspended = false
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let action: Machine.SendAction = state.withLock { locked in
                locked.nextID += 1
                return locked.machine.send(element, id: locked.nextID, token: continuation)
            }
            switch action {
            case .resumeReceiver(let receiver, let element):
                receiver.resume(returning: .element(element))
                continuation.resume()
            case .buffered:
                continuation.resume()
            case .suspend:
                suspended = true
            }
        }
        return suspended
    }

    /// Receives the next element, or nil once every producer finished and the buffer is empty.
    package func receive() async -> Element? {
        switch await receive(deadline: nil) {
        case .element(let element): return element
        case .finished, .timedOut: return nil
        }
    }

    /// Receives the next element, waiting at most `timeout`.
    package func receive(timeout: Duration?) async -> ReceiveResult {
        await receive(deadline: timeout.map { ContinuousClock.now.advanced(by: $0) })
    }

    private func receive(deadline: ContinuousClock.Instant?) async -> ReceiveResult {
        var timer: Task<Void, Never>?
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<ReceiveResult, Never>) in
            let (action, id): (Machine.ReceiveAction, Int) = state.withLock { locked in
                locked.nextID += 1
                return (locked.machine.receive(id: locked.nextID, token: continuation), locked.nextID)
            }
            switch action {
            case .element(let element, let sender):
                sender?.resume()
                continuation.resume(returning: .element(element))
            case .finished:
                continuation.resume(returning: .finished)
            case .suspend:
                if let deadline {
                    timer = Task { [weak self] in
                        try? await Task.sleep(until: deadline, clock: .continuous)
                        guard let self else { return }
                        let expired = self.state.withLock { $0.machine.expireReceiver(id: id) }
                        expired?.resume(returning: .timedOut)
                    }
                }
            }
        }
        timer?.cancel()
        return result
    }

    /// Receives at least one element (waiting for it), then whatever else is buffered, up to `max`.
    /// Returns an empty array once the channel is finished.
    package func receiveBatch(max: Int) async -> [Element] {
        guard let first = await receive() else { return [] }
        guard max > 1 else { return [first] }
        let (more, senders) = state.withLock { $0.machine.drainAvailable(max: max - 1) }
        for sender in senders { sender.resume() }
        return [first] + more
    }

    /// One producer is done; after the last, receivers see the end once the buffer is empty.
    package func finish() {
        let receivers = state.withLock { $0.machine.finishProducer() }
        for receiver in receivers { receiver.resume(returning: .finished) }
    }
}
