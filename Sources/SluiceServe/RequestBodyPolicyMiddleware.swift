import Foundation
import Hummingbird
import NIOCore
import SluiceCore

/// Every request body, before a route sees it (docs/SERVE.md, "Browsers" and "Connections"): JSON only
/// (`Content-Type: application/json`, else 415: the `text/plain` and form bodies a web page may send
/// without asking first never reach a route), at most `serve.max_body_bytes` (413), and all of it within
/// `serve.request_timeout_seconds` (408: a body that trickles in cannot hold a connection for hours). The
/// routes then read the collected body.
struct RequestBodyPolicyMiddleware<Context: RequestContext>: RouterMiddleware {
    let maxBytes: Int
    let timeout: Duration

    static var bodyMethods: Set<HTTPRequest.Method> { [.post, .put, .patch, .delete] }

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    )
        async throws -> Response
    {
        guard Self.bodyMethods.contains(request.method) else { return try await next(request, context) }
        let type = request.headers[.contentType]
        if let type, !Self.isJSON(type) { throw Self.unsupported }
        if type == nil, request.headers[.contentLength] == "0" { return try await next(request, context) }
        var request = request
        let body = try await collect(request.body)
        // A body with no type at all is refused as well: only an empty one needs none.
        if type == nil, body.readableBytes > 0 { throw Self.unsupported }
        request.body = RequestBody(buffer: body)
        return try await next(request, context)
    }

    /// `application/json`, with or without parameters (`; charset=utf-8`).
    static func isJSON(_ type: String) -> Bool {
        type.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() == "application/json"
    }

    static var unsupported: APIError {
        APIError(
            .unsupportedMediaType,
            "unsupported-media-type",
            "request bodies are JSON: Content-Type: application/json"
        )
    }

    /// The whole body, or 413 past `maxBytes`, or 408 past `timeout`. The reading task is cancelled at the
    /// deadline and waited for, so nothing else reads the connection meanwhile.
    private func collect(_ body: RequestBody) async throws -> ByteBuffer {
        let maxBytes = maxBytes
        let timeout = timeout
        return try await withThrowingTaskGroup(of: ByteBuffer?.self) { group in
            group.addTask { try await body.collect(upTo: maxBytes) }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let buffer = first else {
                throw APIError(
                    .requestTimeout,
                    SluiceError.Code.timeout.rawValue,
                    "the request body did not arrive within serve.request_timeout_seconds"
                )
            }
            return buffer
        }
    }
}
