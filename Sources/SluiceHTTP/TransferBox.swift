import Synchronization

/// Meets the cancellation handler and the continuation body of one ``HTTPClient/send(_:)`` call, which
/// may run in either order on different threads.
final class TransferBox: Sendable {
    private let state = Mutex<(transfer: CurlTransfer?, cancelled: Bool)>((nil, false))

    /// Records the transfer; false if the task was cancelled first (do not submit it).
    func store(_ transfer: CurlTransfer) -> Bool {
        state.withLock { state in
            guard !state.cancelled else { return false }
            state.transfer = transfer
            return true
        }
    }

    /// Marks the call cancelled; returns the transfer to abandon if it was already submitted.
    func cancel() -> CurlTransfer? {
        state.withLock { state in
            state.cancelled = true
            return state.transfer
        }
    }
}
