import SluiceCore

/// Who the request being handled is made for, as ``BearerAuthMiddleware`` found it: what it may read
/// (``AccessIdentity``) and what it may call (its scopes). A task-local value: the routes read it.
struct RequestIdentity: Sendable {
    var access: AccessIdentity
    var scopes: Set<APIKeys.Scope>
    /// The key's `id` in `serve.keys_file` (never the key); nil for the operator's token or anonymous.
    var keyID: String?
    /// The principal of a bearer JWT (`serve.jwt`); nil for a key, the operator's token or anonymous.
    var tokenPrincipal: String? = nil
    /// The key's own requests per minute (`rate_limit_per_minute` in `serve.keys_file`); nil: the default.
    var rateLimitPerMinute: Int? = nil
    /// Whether this is the operator's token (`serve.api_key_env`): the detailed `/ready` report.
    var isOperator = false

    /// The operator's token: reads everything, calls everything.
    static let operatorToken = RequestIdentity(
        access: .unrestricted,
        scopes: Set(APIKeys.Scope.allCases),
        isOperator: true
    )
    /// No credential and none required, access control off: as `sluice serve` always was.
    static let unrestricted = RequestIdentity(access: .unrestricted, scopes: Set(APIKeys.Scope.allCases))
    /// No credential and none required, access control on: reads what everyone may read.
    static let anonymous = RequestIdentity(
        access: AccessIdentity(principal: nil, groups: []),
        scopes: Set(APIKeys.Scope.allCases)
    )

    /// The kind of credential, as the audit log names it.
    enum Kind: String, Sendable {
        case operatorToken = "operator"
        case key, jwt, anonymous
        /// No identity: refused before one was found.
        case unidentified = "none"
    }

    var kind: Kind {
        if isOperator { return .operatorToken }
        if keyID != nil { return .key }
        if tokenPrincipal != nil { return .jwt }
        return .anonymous
    }

    /// Who the rate limit and the audit log count this identity as (`key:ID`, `jwt:PRINCIPAL`); nil for the
    /// operator's token and anonymous callers, which are not limited.
    var limitedAs: String? {
        if let keyID { return "key:\(keyID)" }
        if let tokenPrincipal { return "jwt:\(tokenPrincipal)" }
        return nil
    }

    @TaskLocal static var current: RequestIdentity = .unrestricted

    /// The scope a path needs; nil for those every identity may call (`/openapi.json`, the probes).
    static func scope(of path: String) -> APIKeys.Scope? {
        // As a router may read it: without empty segments (`//v1/search/`).
        let path = "/" + path.split(separator: "/").joined(separator: "/")
        if path == "/v1/search" { return .search }
        if path == "/v1/ask" { return .ask }
        if path == "/v1/documents" || path.hasPrefix("/v1/documents/") { return .documents }
        if path == "/v1/export" { return .export }
        if path == "/v1/runs" || path.hasPrefix("/v1/runs/") { return .runs }
        if path == "/metrics" { return .metrics }
        return nil
    }
}
