import SluiceCore

extension HTTPClient {
    /// Sends a request and returns as soon as the response's status and headers arrived; the body
    /// follows as a stream of chunks (server-sent events, a long answer read as it is written).
    ///
    /// Everything else is as for ``send(_:)``: the same connections, limits and errors. A status is never
    /// an error; read an error answer's body with ``HTTPStreamingResponse/collect()``.
    ///
    /// - Parameter request: The request; its headers may carry secrets and are never echoed.
    /// - Returns: The ``HTTPStreamingResponse``, whose body stream throws if the transfer is cut short.
    /// - Throws: ``SluiceError`` on a transport failure before the head arrived (the codes of
    ///   ``send(_:)``); `CancellationError` when the task is cancelled.
    package func stream(_ request: HTTPRequest) async throws -> HTTPStreamingResponse {
        let box = TransferBox()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<HTTPStreamingResponse, any Error>) in
                let delivery = TransferDelivery(streamed: continuation)
                let transfer = CurlTransfer(
                    request: request,
                    limit: request.maxResponseBytes ?? configuration.maxResponseBytes,
                    delivery: delivery
                )
                let loop = self.loop
                delivery.onAbandoned { [weak transfer] in
                    if let transfer { loop.cancel(transfer) }
                }
                if box.store(transfer) {
                    loop.submit(transfer)
                } else {
                    delivery.complete(.failure(CancellationError()))
                }
            }
        } onCancel: {
            if let transfer = box.cancel() { loop.cancel(transfer) }
        }
    }
}
