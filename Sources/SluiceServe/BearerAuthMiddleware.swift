import Hummingbird
import SluiceCore

/// Requires `Authorization: Bearer <token>` on every request but the probes (`/health`, `/ready`) and CORS
/// preflights. The token is compared in constant time and never logged.
struct BearerAuthMiddleware<Context: RequestContext>: RouterMiddleware {
    let token: [UInt8]

    static var openPaths: Set<String> { ["/health", "/ready"] }

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    )
        async throws -> Response
    {
        if request.method == .options || Self.openPaths.contains(request.uri.path) {
            return try await next(request, context)
        }
        guard Self.authorizes(request, token) else {
            throw APIError(.unauthorized, "unauthorized", "a valid bearer token is required")
        }
        return try await next(request, context)
    }

    /// Whether `request` carries `Authorization: Bearer <token>`.
    static func authorizes(_ request: Request, _ token: [UInt8]) -> Bool {
        let header = request.headers[.authorization] ?? ""
        let prefix = "Bearer "
        return header.hasPrefix(prefix) && equal(Array(header.dropFirst(prefix.count).utf8), token)
    }

    /// Equal bytes, in a time that depends on the lengths only.
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(truncatingIfNeeded: a.count ^ b.count)
        for index in 0..<max(a.count, b.count) {
            let x = index < a.count ? a[index] : 0
            let y = index < b.count ? b[index] : 0
            difference |= x ^ y
        }
        return difference == 0 && a.count == b.count
    }
}
