import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceServe

/// Bearer JWTs verified in the process (issue 36, docs/ACCESS.md), against tokens and keys the `openssl`
/// CLI made (``TestTokenIssuer``): what passes, and each way a token must not.
@Suite struct JWTVerifierTests {
    static let secret = Array("an-hs256-secret-of-at-least-32-bytes!".utf8)

    /// The issuer, and a verifier over its JWKS (RSA `r1`, P-256 `e1`) and the HS256 secret.
    static func setUp(
        secret: [UInt8]? = Self.secret,
        keysOf existing: TestTokenIssuer? = nil,
        _ change: (inout PipelineConfiguration.Serve.JWT) -> Void = { _ in }
    ) throws -> (TestTokenIssuer, JWTVerifier) {
        let issuer = try existing ?? TestTokenIssuer()
        let url = try issuer.writeJWKS([try issuer.rsaJWK(kid: "r1"), try issuer.ecJWK(kid: "e1")])
        var settings = PipelineConfiguration.Serve.JWT()
        settings.issuer = TestTokenIssuer.issuer
        settings.audience = TestTokenIssuer.audience
        settings.jwksFile = url.path
        change(&settings)
        let keys = try ReloadingFile<[JSONWebPublicKey]>(
            url: url,
            setting: "serve.jwt.jwks_file",
            load: { try JSONWebKeySet.load($0).keys.map(JSONWebPublicKey.init) },
            describe: { "\($0.count) keys" }
        )
        return (issuer, JWTVerifier(settings: settings, secret: secret, keys: keys))
    }

    static func refusal(_ verifier: JWTVerifier, _ token: String, now: Date = Date()) -> JWTVerifier.Refusal? {
        do {
            _ = try verifier.verify(token, now: now)
            return nil
        } catch {
            return error
        }
    }

    @Test func rs256ES256AndHS256TokensIdentifyTheirPrincipal() throws {
        let (issuer, verifier) = try Self.setUp()
        defer { issuer.cleanUp() }
        let claims = TestTokenIssuer.claims(["realm": ["roles": ["hr", "staff"]], "scope": "search documents openid"])
        for (header, signer) in [
            (["alg": "RS256", "kid": "r1"], TestTokenIssuer.Signer.rsa),
            (["alg": "ES256", "kid": "e1"], .ec),
            (["alg": "ES256"], .ec),  // no kid: the keys of its algorithm are tried
            (["alg": "HS256", "typ": "JWT"], .hmac(Self.secret)),
        ] {
            let token = try issuer.token(claims, header: header, signer: signer)
            #expect(JWTVerifier.looksLikeJWT(Array(token.utf8)))
            let identity = try verifier.verify(token)
            #expect(identity.access.principal == "erin", "\(header)")
            #expect(identity.access.groups == ["eng"])
            #expect(identity.scopes == [.search, .documents], "openid is no scope of Sluice's")
            #expect(identity.limitedAs == "jwt:erin" && identity.keyID == nil && !identity.isOperator)
        }
        // Groups at a nested path; scopes as a list in scp; the principal from another claim.
        let (_, nested) = try Self.setUp(keysOf: issuer) {
            $0.groupsClaim = "realm.roles"
            $0.principalClaim = "email"
        }
        let token = try issuer.token(
            TestTokenIssuer.claims([
                "realm": ["roles": ["hr", "staff"]], "email": "erin@example.com", "scp": ["ask", "runs"],
            ]).filter { $0.key != "scope" },
            header: ["alg": "RS256", "kid": "r1"],
            signer: .rsa
        )
        let identity = try nested.verify(token)
        #expect(identity.access.principal == "erin@example.com" && identity.access.groups == ["hr", "staff"])
        #expect(identity.scopes == [.ask, .runs])
    }

    @Test func aTamperedTokenIsRefused() throws {
        let (issuer, verifier) = try Self.setUp()
        defer { issuer.cleanUp() }
        for (header, signer) in [
            (["alg": "RS256", "kid": "r1"], TestTokenIssuer.Signer.rsa), (["alg": "ES256", "kid": "e1"], .ec),
            (["alg": "HS256"], .hmac(Self.secret)),
        ] {
            let token = try issuer.token(TestTokenIssuer.claims(), header: header, signer: signer)
            let parts = token.split(separator: ".").map(String.init)
            // Another payload under the same signature: an operator's groups.
            let forged = Base64URL.encode(
                try JSONSerialization.data(withJSONObject: TestTokenIssuer.claims(["groups": ["hr"]]))
            )
            #expect(Self.refusal(verifier, "\(parts[0]).\(forged).\(parts[2])")?.failure == .invalid, "\(header)")
            // One bit of the signature flipped.
            var signature = Base64URL.decode(parts[2]) ?? []
            signature[signature.count / 2] ^= 0x01
            let flipped = "\(parts[0]).\(parts[1]).\(Base64URL.encode(signature))"
            #expect(Self.refusal(verifier, flipped)?.failure == .invalid, "\(header)")
        }
        // HS256 signed with another secret.
        let other = try issuer.token(
            TestTokenIssuer.claims(),
            header: ["alg": "HS256"],
            signer: .hmac(Array("another-secret-of-at-least-32-bytes!!".utf8))
        )
        #expect(Self.refusal(verifier, other)?.failure == .invalid)
    }

    @Test func anotherIssuerOrAudienceIsRefused() throws {
        let (issuer, verifier) = try Self.setUp()
        defer { issuer.cleanUp() }
        let header = ["alg": "RS256", "kid": "r1"]
        for extra: [String: Any] in [["iss": "https://other.test"], ["aud": "another-service"], ["aud": ["a", "b"]]] {
            let token = try issuer.token(TestTokenIssuer.claims(extra), header: header, signer: .rsa)
            #expect(Self.refusal(verifier, token)?.failure == .invalid, "\(extra)")
        }
        let withoutIssuer = try issuer.token(
            TestTokenIssuer.claims().filter { $0.key != "iss" },
            header: header,
            signer: .rsa
        )
        #expect(Self.refusal(verifier, withoutIssuer)?.failure == .invalid)
        // An audience list that holds ours passes.
        let listed = try issuer.token(
            TestTokenIssuer.claims(["aud": ["other", TestTokenIssuer.audience]]),
            header: header,
            signer: .rsa
        )
        #expect(Self.refusal(verifier, listed) == nil)
    }

    @Test func expiryAndNotBeforeAreCheckedWithTheLeeway() throws {
        let (issuer, verifier) = try Self.setUp()  // leeway 30 s
        defer { issuer.cleanUp() }
        let now = Date()
        let seconds = Int(now.timeIntervalSince1970)
        func token(_ extra: [String: Any]) throws -> String {
            try issuer.token(
                TestTokenIssuer.claims(extra, now: now),
                header: ["alg": "HS256"],
                signer: .hmac(Self.secret)
            )
        }
        #expect(Self.refusal(verifier, try token(["exp": seconds - 120]), now: now)?.failure == .expired)
        #expect(Self.refusal(verifier, try token(["exp": seconds - 10]), now: now) == nil, "within the leeway")
        #expect(Self.refusal(verifier, try token(["nbf": seconds + 300]), now: now)?.failure == .expired)
        #expect(Self.refusal(verifier, try token(["nbf": seconds + 10]), now: now) == nil, "within the leeway")
        #expect(Self.refusal(verifier, try token(["nbf": seconds - 10]), now: now) == nil)
        let withoutExpiry = try issuer.token(
            TestTokenIssuer.claims(now: now).filter { $0.key != "exp" },
            header: ["alg": "HS256"],
            signer: .hmac(Self.secret)
        )
        #expect(Self.refusal(verifier, withoutExpiry, now: now)?.failure == .invalid, "exp is required")
    }

    @Test func anUnknownKidIsRefused() throws {
        let (issuer, verifier) = try Self.setUp()
        defer { issuer.cleanUp() }
        let token = try issuer.token(TestTokenIssuer.claims(), header: ["alg": "RS256", "kid": "r9"], signer: .rsa)
        #expect(Self.refusal(verifier, token)?.failure == .invalid)
        // The kid of the P-256 key on an RS256 token: a key only verifies its own algorithm.
        let crossed = try issuer.token(TestTokenIssuer.claims(), header: ["alg": "RS256", "kid": "e1"], signer: .rsa)
        #expect(Self.refusal(verifier, crossed)?.failure == .invalid)
    }

    @Test func algNoneAndOtherAlgorithmsAreRefused() throws {
        let (issuer, verifier) = try Self.setUp()
        defer { issuer.cleanUp() }
        for alg in ["none", "None", "NONE", "HS512", "RS384", "PS256"] {
            let token = try issuer.token(TestTokenIssuer.claims(), header: ["alg": alg], signer: .none)
            #expect(Self.refusal(verifier, token)?.failure == .invalid, "\(alg)")
        }
        let critical = try issuer.token(
            TestTokenIssuer.claims(),
            header: ["alg": "HS256", "crit": ["exp"]],
            signer: .hmac(Self.secret)
        )
        #expect(Self.refusal(verifier, critical)?.failure == .invalid)
        for garbage in ["eyJ.eyJ.", "a.b", "eyJhbGciOiJIUzI1NiJ9.bm90IGpzb24.AAAA", ""] {
            #expect(Self.refusal(verifier, garbage)?.failure == .invalid, "\(garbage)")
        }
    }

    @Test func hs256WithThePublicKeyAsSecretIsRefused() throws {
        // Algorithm confusion: a token "signed" HS256 with the RSA public key (which anyone may have).
        for secret in [nil, Self.secret] {
            let (issuer, verifier) = try Self.setUp(secret: secret)
            defer { issuer.cleanUp() }
            let forged = try issuer.token(
                TestTokenIssuer.claims(),
                header: ["alg": "HS256", "kid": "r1"],
                signer: .hmac(issuer.rsaPublicPEM)
            )
            #expect(Self.refusal(verifier, forged)?.failure == .invalid)
        }
    }

    @Test func aKeyRemovedFromTheJWKSStopsWorking() throws {
        let (issuer, verifier) = try Self.setUp()
        defer { issuer.cleanUp() }
        let token = try issuer.token(TestTokenIssuer.claims(), header: ["alg": "RS256", "kid": "r1"], signer: .rsa)
        #expect(Self.refusal(verifier, token) == nil)
        try issuer.writeJWKS([try issuer.ecJWK(kid: "e1")])
        #expect(try verifier.keys?.refresh() != nil)
        #expect(Self.refusal(verifier, token)?.failure == .invalid)
    }

    @Test func theJWKSFileIsChecked() throws {
        let issuer = try TestTokenIssuer()
        defer { issuer.cleanUp() }
        func problem(_ keys: [[String: Any]]) -> String? {
            do {
                let data = try JSONSerialization.data(withJSONObject: ["keys": keys])
                _ = try JSONWebKeySet.parse(data, name: "jwks.json").keys.map(JSONWebPublicKey.init)
                return nil
            } catch {
                return "\(error)"
            }
        }
        var rsa = try issuer.rsaJWK(kid: "r1")
        #expect(problem([rsa]) == nil)
        rsa["alg"] = "HS256"
        #expect(problem([rsa])?.contains("alg HS256") == true)
        rsa["alg"] = nil
        rsa["n"] = Base64URL.encode([UInt8](repeating: 0xC5, count: 128))  // 1024 bits
        #expect(problem([rsa])?.contains("at least 2048") == true)
        var ec = try issuer.ecJWK(kid: "e1")
        ec["y"] = ec["x"]  // not a point of the curve
        #expect(problem([ec])?.contains("not a valid ES256 public key") == true)
        #expect(problem([["kty": "oct", "k": "c2VjcmV0"]])?.contains("no RSA or P-256") == true)
        #expect(problem([try issuer.rsaJWK(kid: "a"), try issuer.ecJWK(kid: "a")])?.contains("used twice") == true)
        // Encryption keys and other curves are skipped, not refused: a provider's set may hold them.
        let set = try JSONWebKeySet.parse(
            try JSONSerialization.data(withJSONObject: [
                "keys": [
                    try issuer.ecJWK(kid: "e1"), ["kty": "EC", "crv": "P-384", "x": "AA", "y": "AA"],
                    ["kty": "RSA", "use": "enc", "n": "AA", "e": "AQAB"],
                ]
            ]),
            name: "jwks.json"
        )
        #expect(set.keys.count == 1 && set.skipped == 2)
    }
}
