import Hummingbird
import SluiceCore

/// Finds who a request is made for (``RequestIdentity``) and refuses it without a valid credential: the
/// operator's bearer token (`serve.api_key_env`) or a key of `serve.keys_file` in
/// `Authorization: Bearer <key>` on every request but the probes (`/health`, `/ready`) and CORS
/// preflights. Credentials are compared in constant time and never logged (docs/ACCESS.md).
///
/// With neither configured (a loopback bind), every request is anonymous: unrestricted as before, or,
/// with access control on, reading only what everyone may read.
struct BearerAuthMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The operator's token: an unrestricted identity with every scope.
    let token: [UInt8]?
    let keys: APIKeyRing?
    let access: PipelineConfiguration.Access

    static var openPaths: Set<String> { ["/health", "/ready"] }

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    )
        async throws -> Response
    {
        let presented = Self.presented(request)
        let identified = presented.flatMap(identify)
        if request.method == .options || Self.openPaths.contains(request.uri.path) {
            return try await RequestIdentity.$current.withValue(identified ?? anonymous) {
                try await next(request, context)
            }
        }
        let identity: RequestIdentity
        if let identified {
            identity = identified
        } else if token == nil && keys == nil {
            identity = anonymous
        } else {
            throw APIError(.unauthorized, "unauthorized", "a valid bearer token is required")
        }
        if let scope = RequestIdentity.scope(of: request.uri.path), !identity.scopes.contains(scope) {
            throw APIError(
                .forbidden,
                "forbidden",
                "this key's scopes do not include \(scope.rawValue) (serve.keys_file)"
            )
        }
        return try await RequestIdentity.$current.withValue(identity) { try await next(request, context) }
    }

    /// Who a request without a credential is, when none is required.
    var anonymous: RequestIdentity {
        access.isEnabled ? .anonymous : .unrestricted
    }

    /// The identity `presented` stands for: the operator's token, else a key of the file; nil for neither.
    func identify(_ presented: [UInt8]) -> RequestIdentity? {
        // Both are always compared, so the time taken does not tell a key from the token.
        let isOperator = token.map { Self.equal(presented, $0) } ?? false
        let key = keys?.keys.identify(presented)
        if isOperator { return .operatorToken }
        guard let key else { return nil }
        return RequestIdentity(
            access: AccessIdentity(principal: key.principal, groups: key.groups),
            scopes: key.scopes,
            keyID: key.id
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
