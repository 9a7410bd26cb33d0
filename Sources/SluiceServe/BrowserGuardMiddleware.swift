import Hummingbird

/// What keeps web pages out of a loopback server (docs/SERVE.md, "Browsers"): on a server bound to
/// loopback, a `Host` that is not one of its names answers 421 (DNS rebinding); on a server without a token,
/// a request from an `Origin` not in `serve.cors_origins` answers 403 (a cross-site page's POST, which a
/// browser sends without asking first). Requests without `Origin` (scripts, the client, curl) pass.
struct BrowserGuardMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Nil when the server is not bound to loopback (a token guards it then).
    let hosts: HostPolicy?
    let listening: ListeningPort
    /// Whether a `Origin` header must be an allowed one (a server without a token).
    let checksOrigin: Bool
    let origins: Set<String>

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    )
        async throws -> Response
    {
        if let hosts {
            guard hosts.allows(request.head.authority, port: listening.port) else {
                throw APIError(
                    .misdirectedRequest,
                    "host-refused",
                    "this server answers requests for its loopback address and port (127.0.0.1:\(listening.port), "
                        + "localhost:\(listening.port)) and the names of serve.allowed_hosts only"
                )
            }
        }
        if checksOrigin, let origin = request.headers[.origin], !origins.contains("*"), !origins.contains(origin) {
            throw APIError(
                .forbidden,
                "origin-refused",
                "requests from web pages need their origin in serve.cors_origins (or a token: serve.api_key_env)"
            )
        }
        return try await next(request, context)
    }
}
