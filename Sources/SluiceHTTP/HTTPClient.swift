import SluiceCore

/// The HTTP client shared by remote embedders and sinks: libcurl's multi interface driven by one thread.
///
/// `send` never blocks a thread of Swift's cooperative pool: the request is handed to the client's
/// event-loop thread (``CurlMultiLoop``) and the caller's task is resumed when the answer is complete.
/// Connections are kept alive and reused across requests; HTTP/2 is used where the server offers it (and
/// concurrent requests share one connection); responses may be compressed (gzip, deflate, br, zstd);
/// TLS peers are verified (``Configuration/caBundlePath`` names another CA bundle). libcurl reads the
/// standard proxy variables itself: `http_proxy` (lower case only), `https_proxy`/`HTTPS_PROXY`,
/// `all_proxy`/`ALL_PROXY` and `no_proxy`/`NO_PROXY`.
///
/// An HTTP status is never an error: a 429 or 503 is a response for the caller to judge.
package final class HTTPClient: Sendable {
    package let configuration: Configuration
    let loop: CurlMultiLoop

    /// A client with the default configuration, for the whole process.
    package static let shared = HTTPClient()

    /// Starts a client with its own connection pool and event-loop thread.
    package init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        self.loop = CurlMultiLoop(configuration: configuration)
    }

    deinit {
        loop.stop()
    }

    /// Sends a request and returns the response, whatever its status.
    ///
    /// - Parameter request: The request; its headers may carry secrets and are never echoed.
    /// - Returns: The ``HTTPResponse``.
    /// - Throws: ``SluiceError`` on transport failure: code `timeout` or `network` when retrying may
    ///   help (``SluiceError/isTransient``), `too-large` for a body over the request's
    ///   ``HTTPRequest/maxResponseBytes`` or ``Configuration/maxResponseBytes``, `io` otherwise (malformed URL, TLS verification, …);
    ///   `CancellationError` when the task is cancelled (the transfer is abandoned).
    package func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let box = TransferBox()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, any Error>) in
                let transfer = CurlTransfer(
                    request: request,
                    limit: request.maxResponseBytes ?? configuration.maxResponseBytes,
                    delivery: TransferDelivery(whole: continuation)
                )
                if box.store(transfer) {
                    loop.submit(transfer)
                } else {
                    continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            if let transfer = box.cancel() { loop.cancel(transfer) }
        }
    }
}
