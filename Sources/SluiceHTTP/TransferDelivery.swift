/// Where a ``CurlTransfer`` hands its result: one continuation for the whole response (``HTTPClient/send(_:)``),
/// or the head first and then the body in chunks (``HTTPClient/stream(_:)``).
///
/// Loop thread only, except for creation.
final class TransferDelivery: @unchecked Sendable {
    private enum Mode {
        case whole(CheckedContinuation<HTTPResponse, any Error>)
        case streamed(
            head: CheckedContinuation<HTTPStreamingResponse, any Error>,
            body: AsyncThrowingStream<[UInt8], any Error>,
            continuation: AsyncThrowingStream<[UInt8], any Error>.Continuation
        )
    }

    private let mode: Mode
    private var headDelivered = false
    private var finished = false

    init(whole continuation: CheckedContinuation<HTTPResponse, any Error>) {
        mode = .whole(continuation)
    }

    init(streamed head: CheckedContinuation<HTTPStreamingResponse, any Error>) {
        let (body, continuation) = AsyncThrowingStream<[UInt8], any Error>.makeStream()
        mode = .streamed(head: head, body: body, continuation: continuation)
    }

    /// True when body bytes go to the reader as they arrive instead of being collected.
    var isStreamed: Bool {
        if case .streamed = mode { return true }
        return false
    }

    /// Calls `handler` when the reader drops the body stream before its end (to abandon the transfer).
    func onAbandoned(_ handler: @escaping @Sendable () -> Void) {
        guard case .streamed(_, _, let continuation) = mode else { return }
        continuation.onTermination = { reason in
            if case .cancelled = reason { handler() }
        }
    }

    /// Hands the status and headers to a streaming reader (once; later calls do nothing).
    func deliverHead(status: Int, headers: [String: String]) {
        guard case .streamed(let head, let body, _) = mode, !headDelivered, !finished else { return }
        headDelivered = true
        head.resume(returning: HTTPStreamingResponse(status: status, headers: headers, body: body))
    }

    /// Hands body bytes to a streaming reader.
    func deliverBody(_ bytes: [UInt8]) {
        guard case .streamed(_, _, let continuation) = mode else { return }
        continuation.yield(bytes)
    }

    /// Ends the exchange: the whole response (or, streamed, the end of the body), or the failure.
    func complete(_ result: Result<HTTPResponse, any Error>) {
        guard !finished else { return }
        switch mode {
        case .whole(let continuation):
            finished = true
            continuation.resume(with: result)
        case .streamed(let head, _, let continuation):
            switch result {
            case .success(let response):
                deliverHead(status: response.status, headers: response.headers)
                continuation.finish()
            case .failure(let error):
                if !headDelivered { head.resume(throwing: error) }
                continuation.finish(throwing: error)
            }
            finished = true
        }
    }
}
