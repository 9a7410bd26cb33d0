import Hummingbird
import Logging
import SluiceCore

/// Finds who a request is made for (``RequestIdentity``) and refuses it without a valid credential: the
/// operator's bearer token (`serve.api_key_env`), a key of `serve.keys_file` or a JWT (`serve.jwt`,
/// ``JWTVerifier``) in `Authorization: Bearer <credential>` on every request but the probes (`/health`,
/// `/ready`) and CORS preflights. Keys are compared in constant time; no credential is ever logged
/// (docs/ACCESS.md). Each refusal is counted in `/metrics` by its reason (``AuthenticationFailure``).
///
/// With neither configured (a loopback bind), every request is anonymous: unrestricted as before, or,
/// with access control on, reading only what everyone may read.
struct BearerAuthMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The operator's token: an unrestricted identity with every scope.
    let token: [UInt8]?
    let keys: APIKeyRing?
    var jwt: JWTVerifier? = nil
    let access: PipelineConfiguration.Access
    /// Where refusals are counted; nil: not counted.
    var metrics: ServeMetrics? = nil
    /// The per-identity request budget; nil: no limit.
    var limiter: RateLimiter? = nil

    /// Whether any credential is configured (without one, every request is anonymous).
    var requiresCredential: Bool { token != nil || keys != nil || jwt != nil }

    static var openPaths: Set<String> { ["/health", "/ready"] }

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    )
        async throws -> Response
    {
        let presented = Self.presented(request)
        let identified = presented.map(identify)
        if request.method == .options || Self.openPaths.contains(request.uri.path) {
            return try await RequestIdentity.$current.withValue((try? identified?.get()) ?? anonymous) {
                try await next(request, context)
            }
        }
        let identity: RequestIdentity
        switch identified {
        case .success(let found)?:
            identity = found
        case _ where !requiresCredential:
            identity = anonymous
        case .failure(let refusal)?:
            metrics?.recordAuthenticationFailure(refusal.failure)
            context.logger.info(
                "credential refused",
                metadata: ["sluice-reason": "\(refusal.failure.rawValue): \(refusal.reason)"]
            )
            throw APIError(
                .unauthorized,
                "unauthorized",
                refusal.failure == .expired
                    ? "the bearer token has expired or is not valid yet" : "a valid bearer token is required"
            )
        case nil:
            metrics?.recordAuthenticationFailure(.missing)
            throw APIError(.unauthorized, "unauthorized", "a valid bearer token is required")
        }
        AuditRecord.identified(identity)
        if let limiter, case .limited(let seconds) = limiter.take(identity) {
            return Self.rateLimited(retryAfter: seconds)
        }
        if let scope = RequestIdentity.scope(of: request.uri.path), !identity.scopes.contains(scope) {
            metrics?.recordAuthenticationFailure(.forbidden)
            throw APIError(
                .forbidden,
                "forbidden",
                "this credential's scopes do not include \(scope.rawValue) (serve.keys_file, serve.jwt)"
            )
        }
        return try await RequestIdentity.$current.withValue(identity) { try await next(request, context) }
    }

    /// 429 with `Retry-After`: the caller's requests per minute are used up.
    static func rateLimited(retryAfter seconds: Int) -> Response {
        var response = JSONResponse.error(
            APIError(
                .tooManyRequests,
                "rate-limited",
                "this credential's requests per minute are used up (serve.rate_limit_per_minute): retry after \(seconds) s"
            )
        )
        response.headers[.retryAfter] = String(seconds)
        return response
    }

    /// Who a request without a credential is, when none is required.
    var anonymous: RequestIdentity {
        access.isEnabled ? .anonymous : .unrestricted
    }

    /// The identity `presented` stands for: the operator's token, else a JWT when it has a JWT's shape and
    /// `serve.jwt` is set, else a key of the file.
    func identify(_ presented: [UInt8]) -> Result<RequestIdentity, JWTVerifier.Refusal> {
        // The token and the keys are always compared, so the time taken does not tell a key from the token.
        let isOperator = token.map { Self.equal(presented, $0) } ?? false
        let key = keys?.keys.identify(presented)
        if isOperator { return .success(.operatorToken) }
        if let jwt, key == nil, JWTVerifier.looksLikeJWT(presented) {
            return Result { () throws(JWTVerifier.Refusal) in try jwt.verify(String(decoding: presented, as: UTF8.self))
            }
        }
        guard let key else { return .failure(.init(failure: .invalid, reason: "not a known key or token")) }
        return .success(
            RequestIdentity(
                access: AccessIdentity(principal: key.principal, groups: key.groups),
                scopes: key.scopes,
                keyID: key.id,
                rateLimitPerMinute: key.rateLimitPerMinute
            )
        )
    }

    /// The bytes after `Authorization: Bearer `; nil without them.
    static func presented(_ request: Request) -> [UInt8]? {
        let header = request.headers[.authorization] ?? ""
        let prefix = "Bearer "
        guard header.hasPrefix(prefix) else { return nil }
        return Array(header.dropFirst(prefix.count).utf8)
    }

    /// Equal bytes, in a time that depends on the lengths only.
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool { SHA256.constantTimeEqual(a, b) }
}
