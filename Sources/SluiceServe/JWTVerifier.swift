import Foundation
import SluiceCore

/// Verifies the bearer JWTs of `sluice serve` (`serve.jwt`, docs/ACCESS.md) in the process, with no network
/// call: HS256 with the secret of `serve.jwt.hs256_secret_env`, RS256 and ES256 with the keys of
/// `serve.jwt.jwks_file`. The signature first, then `iss`, `aud`, `exp` (required) and `nbf` (each time
/// with `leeway_seconds`), then the principal, groups and scopes from the configured claims.
///
/// Refused: `alg: none` and any algorithm but those three; a `crit` header; HS256 when no secret is set
/// (so a token signed with a public key of the JWKS as an HMAC secret never verifies: the JWKS keys only
/// ever verify their own RS256 or ES256); a `kid` the JWKS does not hold.
struct JWTVerifier: Sendable {
    let settings: PipelineConfiguration.Serve.JWT
    /// HS256's secret; nil: HS256 refused.
    let secret: [UInt8]?
    /// The JWKS file's keys; nil: RS256 and ES256 refused.
    let keys: ReloadingFile<[JSONWebPublicKey]>?

    /// Why a token was refused: ``AuthenticationFailure/expired`` when it is outside its validity (after
    /// `exp`, before `nbf`), ``AuthenticationFailure/invalid`` for anything else. The reason is for the
    /// metrics and the log; the answer to the client says as little.
    struct Refusal: Error, Equatable {
        var failure: AuthenticationFailure
        /// For the log (never the token, a claim's value or a key).
        var reason: String
    }

    /// Whether `credential` is shaped as a JWS compact serialization (three base64url parts), as opposed to
    /// an API key or the operator's token. The shape is no secret.
    static func looksLikeJWT(_ credential: [UInt8]) -> Bool {
        credential.count > 16 && credential.starts(with: Array("eyJ".utf8))
            && credential.lazy.filter({ $0 == UInt8(ascii: ".") }).count == 2
    }

    /// The identity `token` stands for.
    /// - Throws: ``Refusal``.
    func verify(_ token: String, now: Date = Date()) throws(Refusal) -> RequestIdentity {
        func invalid(_ reason: String) -> Refusal { Refusal(failure: .invalid, reason: reason) }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]),
            let payloadBytes = Base64URL.decode(parts[1]), let signature = Base64URL.decode(parts[2])
        else { throw invalid("not a signed JWT (three base64url parts)") }
        guard let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any],
            let algorithm = header["alg"] as? String
        else { throw invalid("the header is not a JSON object with alg") }
        if header["crit"] != nil { throw invalid("a crit header (no extension is understood)") }
        let input = Array(parts[0].utf8) + [UInt8(ascii: ".")] + Array(parts[1].utf8)
        switch algorithm {
        case "HS256":
            guard let secret else { throw invalid("HS256, but serve.jwt.hs256_secret_env is not set") }
            guard let expected = JSONWebPublicKey.hmacSHA256(input, secret: secret),
                SHA256.constantTimeEqual(expected, signature)
            else { throw invalid("the signature does not verify") }
        case "RS256", "ES256":
            guard let keys else { throw invalid("\(algorithm), but serve.jwt.jwks_file is not set") }
            var candidates = keys.value.filter { $0.algorithm == algorithm }
            if let kid = header["kid"] as? String {
                candidates = candidates.filter { $0.id == kid }
                if candidates.isEmpty { throw invalid("a kid the JWKS file does not hold for \(algorithm)") }
            }
            guard candidates.contains(where: { $0.verifies(signature, of: input) }) else {
                throw invalid("the signature does not verify")
            }
        default:
            throw invalid("the algorithm \(algorithm.prefix(16)) is refused (HS256, RS256, ES256)")
        }
        guard let claims = try? JSONSerialization.jsonObject(with: Data(payloadBytes)) as? [String: Any] else {
            throw invalid("the payload is not a JSON object")
        }
        return try identity(claims, now: now)
    }

    /// The checks of a verified token's claims, and the identity they give.
    func identity(_ claims: [String: Any], now: Date) throws(Refusal) -> RequestIdentity {
        func invalid(_ reason: String) -> Refusal { Refusal(failure: .invalid, reason: reason) }
        guard claims["iss"] as? String == settings.issuer else { throw invalid("another issuer") }
        let audiences =
            (claims["aud"] as? [Any])?.compactMap { $0 as? String } ?? [claims["aud"] as? String].compactMap { $0 }
        guard audiences.contains(settings.audience) else { throw invalid("for another audience") }
        let time = now.timeIntervalSince1970
        guard let expiry = Self.seconds(claims["exp"]) else { throw invalid("no exp") }
        guard time < expiry + settings.leewaySeconds else {
            throw Refusal(failure: .expired, reason: "expired")
        }
        if let notBefore = claims["nbf"] {
            guard let notBefore = Self.seconds(notBefore) else { throw invalid("nbf is not a number") }
            guard time >= notBefore - settings.leewaySeconds else {
                throw Refusal(failure: .expired, reason: "not valid yet (nbf)")
            }
        }
        guard let principal = Self.claim(claims, settings.principalClaim) as? String, !principal.isEmpty else {
            throw invalid("no principal in the claim \(settings.principalClaim)")
        }
        let groups = Self.texts(Self.claim(claims, settings.groupsClaim), splittingSpaces: false)
        let scopeNames: [String]
        if let path = settings.scopesClaim {
            scopeNames = Self.texts(Self.claim(claims, path), splittingSpaces: true)
        } else {
            scopeNames = Self.texts(claims["scope"] ?? claims["scp"], splittingSpaces: true)
        }
        return RequestIdentity(
            access: AccessIdentity(principal: principal, groups: groups),
            scopes: Set(scopeNames.compactMap(APIKeys.Scope.init(rawValue:))),
            tokenPrincipal: principal
        )
    }

    /// The value at a dotted path (`realm_access.roles`); a claim whose own name holds the dots wins.
    static func claim(_ claims: [String: Any], _ path: String) -> Any? {
        if let value = claims[path] { return value }
        var current: Any? = claims
        for name in path.split(separator: ".") {
            current = (current as? [String: Any])?[String(name)]
        }
        return current
    }

    /// A list of texts, or one text (split at spaces for scopes, as OAuth's `scope` writes them).
    static func texts(_ value: Any?, splittingSpaces: Bool) -> [String] {
        switch value {
        case let text as String:
            return splittingSpaces ? text.split(separator: " ").map(String.init) : (text.isEmpty ? [] : [text])
        case let list as [Any]:
            return list.compactMap { $0 as? String }.filter { !$0.isEmpty }
        default:
            return []
        }
    }

    /// A NumericDate (seconds since 1970, possibly fractional).
    static func seconds(_ value: Any?) -> Double? {
        let seconds: Double
        switch value {
        case let whole as Int: seconds = Double(whole)
        case let fraction as Double: seconds = fraction
        case let number as NSNumber: seconds = number.doubleValue
        default: return nil
        }
        return seconds.isFinite ? seconds : nil
    }
}
