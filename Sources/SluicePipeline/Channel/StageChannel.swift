import Synchronization

/// The bounded buffer between two stages: many producers, many consumers, and a full buffer
/// **suspends** the producer — nothing is ever dropped.
///
/// Why not swift-async-algorithms' `MultiProducerSingleConsumerAsyncChannel`: a stage is a pool of
/// workers that all consume from one buffer, and that channel has a single consumer and a `~Copyable`
/// source that cannot be shared across a task group. The decisions live in
/// ``StageChannelStateMachine``; this type only carries them out under a lock.
///
/// Cancellation, as in swift-async-algorithms' `ChannelStorage`: a task cancelled before or while it
/// waits in ``send(_:)`` or ``receive()`` is removed from the waiters and resumed with
/// `CancellationError`; a cancelled sender's element is not delivered, and the channel stays usable.
package final class StageChannel<Element: Sendable>: Sendable {
    /// A sender is resumed with whether its element was delivered (false: it was cancelled first).
    private typealias Machine = StageChannelStateMachine<
        Element, CheckedContinuation<Bool, Never>, CheckedContinuation<Receipt, Never>
    >

    package enum ReceiveResult: Sendable {
        case element(Element)
        case timedOut
        case finished
    }

    /// What a receiver is resumed with.
    private enum Receipt {
        case received(ReceiveResult)
        case cancelled
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
    /// Suspended senders and receivers (for tests).
    var waiting: (senders: Int, receivers: Int) { state.withLock { $0.machine.waiting } }

    /// Sends an element, suspending while the buffer is full.
    ///
    /// A sending task that is cancelled (before or while it waits for room) is resumed with
    /// `CancellationError`, and its element is not delivered; the channel stays usable.
    /// - Returns: whether the sender had to wait (for blocked-time statistics).
    @discardableResult
    package func send(_ element: Element) async throws(CancellationError) -> Bool {
        let id = state.withLock { locked in
            locked.nextID += 1
            return locked.nextID
        }
        var suspended = false
        let delivered = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let action: Machine.SendAction? = state.withLock { locked in
                    // Checked under the lock: a cancellation handler that ran before finds nothing to
                    // remove, one that runs after finds the sender waiting.
                    if Task.isCancelled { return nil }
                    return locked.machine.send(element, id: id, token: continuation)
                }
                switch action {
                case nil:
                    continuation.resume(returning: false)
                case .resumeReceiver(let receiver, let element):
                    receiver.resume(returning: .received(.element(element)))
                    continuation.resume(returning: true)
                case .buffered:
                    continuation.resume(returning: true)
                case .suspend:
                    suspended = true
                }
            }
        } onCancel: {
            let sender = state.withLock { $0.machine.removeSender(id: id) }
            sender?.token.resume(returning: false)
        }
        guard delivered else { throw CancellationError() }
        return suspended
    }

    /// Receives the next element, or nil once every producer finished and the buffer is empty.
    /// - Throws: `CancellationError` if the receiving task is cancelled (before or while it waits).
    package func receive() async throws(CancellationError) -> Element? {
        switch try await receive(deadline: nil) {
        case .element(let element): return element
        case .finished, .timedOut: return nil
        }
    }

    /// Receives the next element, waiting at most `timeout`.
    /// - Throws: `CancellationError` if the receiving task is cancelled (before or while it waits).
    package func receive(timeout: Duration?) async throws(CancellationError) -> ReceiveResult {
        try await receive(deadline: timeout.map { ContinuousClock.now.advanced(by: $0) })
    }

    private func receive(deadline: ContinuousClock.Instant?) async throws(CancellationError) -> ReceiveResult {
        let id = state.withLock { locked in
            locked.nextID += 1
            return locked.nextID
        }
        var timer: Task<Void, Never>?
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Receipt, Never>) in
                let action: Machine.ReceiveAction? = state.withLock { locked in
                    if Task.isCancelled { return nil }
                    return locked.machine.receive(id: id, token: continuation)
                }
                switch action {
                case nil:
                    continuation.resume(returning: .cancelled)
                case .element(let element, let sender):
                    sender?.resume(returning: true)
                    continuation.resume(returning: .received(.element(element)))
                case .finished:
                    continuation.resume(returning: .received(.finished))
                case .suspend:
                    if let deadline {
                        timer = Task { [weak self] in
                            try? await Task.sleep(until: deadline, clock: .continuous)
                            guard let self else { return }
                            let expired = self.state.withLock { $0.machine.removeReceiver(id: id) }
                            expired?.resume(returning: .received(.timedOut))
                        }
                    }
                }
            }
        } onCancel: {
            let receiver = state.withLock { $0.machine.removeReceiver(id: id) }
            receiver?.resume(returning: .cancelled)
        }
        timer?.cancel()
        guard case .received(let result) = outcome else { throw CancellationError() }
        return result
    }

    /// Receives at least one element (waiting for it), then whatever else is buffered, up to `max`.
    /// Returns an empty array once the channel is finished.
    /// - Throws: `CancellationError` if the receiving task is cancelled while it waits for the first.
    package func receiveBatch(max: Int) async throws(CancellationError) -> [Element] {
        guard let first = try await receive() else { return [] }
        guard max > 1 else { return [first] }
        let (more, senders) = state.withLock { $0.machine.drainAvailable(max: max - 1) }
        for sender in senders { sender.resume(returning: true) }
        return [first] + more
    }

    /// One producer is done; after the last, receivers see the end once the buffer is empty.
    package func finish() {
        let receivers = state.withLock { $0.machine.finishProducer() }
        for receiver in receivers { receiver.resume(returning: .received(.finished)) }
    }
}
