/// Why `sluice serve` refused a request's credential, as `/metrics` counts it
/// (`sluice_auth_failures_total{reason=…}`): never a principal, a key id or the credential.
enum AuthenticationFailure: String, Sendable, CaseIterable {
    /// No `Authorization: Bearer` credential where one is required.
    case missing
    /// A key or token that is not accepted: unknown, a bad signature, another issuer or audience, a refused
    /// algorithm, a malformed token.
    case invalid
    /// A JWT outside its validity: after `exp` or before `nbf` (with the leeway).
    case expired
    /// A valid credential whose scopes do not include the route (403).
    case forbidden
}
