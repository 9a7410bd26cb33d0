import Hummingbird

/// CORS for the configured origins (`serve.cors_origins`; `*` allows any): the allow headers on answers
/// to an allowed `Origin`, and the answer to a preflight `OPTIONS`. With no origins configured it adds
/// nothing, and browsers keep other sites out.
struct OriginPolicyMiddleware<Context: RequestContext>: RouterMiddleware {
    let origins: Set<String>

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    )
        async throws -> Response
    {
        guard let origin = request.headers[.origin], origins.contains("*") || origins.contains(origin) else {
            return try await next(request, context)
        }
        var headers: HTTPFields = [:]
        headers[.accessControlAllowOrigin] = origins.contains("*") ? "*" : origin
        headers[.vary] = "Origin"
        if request.method == .options {
            headers[.accessControlAllowMethods] = "GET, POST, OPTIONS"
            headers[.accessControlAllowHeaders] = "Authorization, Content-Type, Accept"
            headers[.accessControlMaxAge] = "600"
            return Response(status: .noContent, headers: headers)
        }
        var response = try await next(request, context)
        response.headers.append(contentsOf: headers)
        return response
    }
}
