/// The decisions of a ``StageChannel``, free of tasks and locks so they can be tested directly.
///
/// Holds a bounded buffer, the suspended senders (their elements wait with them: nothing is ever
/// dropped) and the suspended receivers. Every mutating call returns what the owner must resume.
struct StageChannelStateMachine<Element, SendToken, ReceiveToken> {
    private(set) var buffer: [Element] = []
    private var bufferHead = 0
    let capacity: Int
    private var waitingSenders: [(id: Int, element: Element, token: SendToken)] = []
    private var waitingReceivers: [(id: Int, token: ReceiveToken)] = []
    private var openProducers: Int
    private(set) var highWater = 0

    init(capacity: Int, producers: Int) {
        precondition(capacity >= 1 && producers >= 1)
        self.capacity = capacity
        self.openProducers = producers
    }

    var count: Int { buffer.count - bufferHead }
    /// Senders suspended for room, and receivers suspended for an element.
    var waiting: (senders: Int, receivers: Int) { (waitingSenders.count, waitingReceivers.count) }

    enum SendAction {
        /// The element went to a waiting receiver: resume it with the element.
        case resumeReceiver(ReceiveToken, Element)
        /// Buffered; the sender continues.
        case buffered
        /// The buffer is full: suspend the sender (the element is kept with it).
        case suspend
    }

    mutating func send(_ element: Element, id: Int, token: SendToken) -> SendAction {
        precondition(openProducers > 0, "send after every producer finished")
        if !waitingReceivers.isEmpty {
            let receiver = waitingReceivers.removeFirst()
            return .resumeReceiver(receiver.token, element)
        }
        if count < capacity {
            buffer.append(element)
            highWater = max(highWater, count)
            return .buffered
        }
        waitingSenders.append((id, element, token))
        return .suspend
    }

    enum ReceiveAction {
        /// An element is available; if a sender was waiting for room, resume it too.
        case element(Element, resumeSender: SendToken?)
        /// Nothing yet: suspend the receiver.
        case suspend
        /// Every producer finished and nothing is left.
        case finished
    }

    mutating func receive(id: Int, token: ReceiveToken) -> ReceiveAction {
        if count > 0 {
            let element = popFirst()
            var resumed: SendToken?
            if !waitingSenders.isEmpty {
                let sender = waitingSenders.removeFirst()
                buffer.append(sender.element)
                resumed = sender.token
            }
            return .element(element, resumeSender: resumed)
        }
        if !waitingSenders.isEmpty {
            // Capacity is at least 1, so this only happens transiently; hand over directly.
            let sender = waitingSenders.removeFirst()
            return .element(sender.element, resumeSender: sender.token)
        }
        if openProducers == 0 { return .finished }
        waitingReceivers.append((id, token))
        return .suspend
    }

    /// Takes up to `max` elements that are available without waiting (after a first one was received).
    mutating func drainAvailable(max: Int) -> (elements: [Element], resumeSenders: [SendToken]) {
        var elements: [Element] = []
        var senders: [SendToken] = []
        while elements.count < max, count > 0 {
            elements.append(popFirst())
            if !waitingSenders.isEmpty {
                let sender = waitingSenders.removeFirst()
                buffer.append(sender.element)
                senders.append(sender.token)
            }
        }
        return (elements, senders)
    }

    /// A producer is done. When the last one is, waiting receivers are told the channel is finished.
    mutating func finishProducer() -> [ReceiveToken] {
        precondition(openProducers > 0, "finish called more often than there are producers")
        openProducers -= 1
        guard openProducers == 0 else { return [] }
        // Elements still buffered (or held by suspended senders) are delivered first; a receiver only
        // waits when both are empty, so every waiting receiver can be told now.
        let receivers = waitingReceivers.map(\.token)
        waitingReceivers.removeAll()
        return receivers
    }

    /// A receive with a deadline ran out, or the receiving task was cancelled: removes the receiver if
    /// it is still waiting (nil: it was already resumed with an element or the end).
    mutating func removeReceiver(id: Int) -> ReceiveToken? {
        guard let index = waitingReceivers.firstIndex(where: { $0.id == id }) else { return nil }
        return waitingReceivers.remove(at: index).token
    }

    /// The sending task was cancelled: removes the sender if it is still waiting for room, with its
    /// element, which is then not delivered (nil: the element was already taken, the send succeeded).
    mutating func removeSender(id: Int) -> (token: SendToken, element: Element)? {
        guard let index = waitingSenders.firstIndex(where: { $0.id == id }) else { return nil }
        let sender = waitingSenders.remove(at: index)
        return (sender.token, sender.element)
    }

    private mutating func popFirst() -> Element {
        let element = buffer[bufferHead]
        bufferHead += 1
        if bufferHead > 64 && bufferHead * 2 > buffer.count {
            buffer.removeFirst(bufferHead)
            bufferHead = 0
        }
        return element
    }
}
