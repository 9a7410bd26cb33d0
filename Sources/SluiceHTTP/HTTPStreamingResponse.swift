/// The answer to an ``HTTPRequest`` sent with ``HTTPClient/stream(_:)``: the status and headers as soon as
/// they arrived, and the body as it arrives.
///
/// The body stream ends when the transfer ends: normally, or by throwing the transport error that cut it
/// short (a reset, a timeout, a body over ``HTTPClient/Configuration/maxResponseBytes``). Chunks are kept
/// until read (libcurl is not paused), so a body is held in memory at most up to that limit. Dropping the
/// stream, or cancelling the task that reads it, abandons the transfer.
public struct HTTPStreamingResponse: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// Header fields, names lower-cased; repeated fields joined with `, `.
    public var headers: [String: String]
    /// The body's bytes, in chunks as the network delivered them (decompressed).
    public var body: AsyncThrowingStream<[UInt8], any Error>

    public init(status: Int, headers: [String: String], body: AsyncThrowingStream<[UInt8], any Error>) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// Reads the rest of the body into an ``HTTPResponse`` (for an error answer whose message is needed).
    ///
    /// - Throws: the transport error that ended the body, if any.
    public func collect() async throws -> HTTPResponse {
        var bytes: [UInt8] = []
        for try await chunk in body { bytes.append(contentsOf: chunk) }
        return HTTPResponse(status: status, headers: headers, body: bytes)
    }
}
