import Foundation
import SluiceClient
import SluiceTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Identities on the real `sluice serve` beyond the keys file (docs/ACCESS.md, issue 36): bearer JWTs of
/// an identity provider (HS256, RS256 from a JWKS file) restricted like keys, refusals counted in
/// `/metrics` by reason, per-identity rate limits (429 with `Retry-After`), and the audit log.
@Suite(.serialized)
struct ServeIdentityCLITests {
    static let secret = "a-shared-hs256-secret-of-42-bytes-0123456"

    static func jwtSettings(_ ws: Workspace, _ issuer: TestTokenIssuer) throws -> [String] {
        let jwks = try issuer.writeJWKS([try issuer.rsaJWK(kid: "r1")])
        return [
            "--set", "serve.jwt.issuer=\(TestTokenIssuer.issuer)", "--set",
            "serve.jwt.audience=\(TestTokenIssuer.audience)",
            "--set", "serve.jwt.hs256_secret_env=SLUICE_TEST_JWT_SECRET", "--set", "serve.jwt.jwks_file=\(jwks.path)",
        ]
    }

    static func serve(_ ws: Workspace, _ target: Workspace.Target, _ extra: [String]) async throws -> ServeProcess {
        try await ServeProcess.start(
            ws,
            target,
            [
                "--set", "serve.keys_file=\(ws.file("keys.yaml").path)", "--set", "serve.api_key_env=SLUICE_TEST_TOKEN",
            ] + extra,
            environment: [
                "SLUICE_TEST_TOKEN": ServeAccessCLITests.operatorToken, "SLUICE_TEST_JWT_SECRET": Self.secret,
            ]
        )
    }

    static let query = Data(#"{"query": "salary payroll", "k": 5, "mode": "vector"}"#.utf8)
    static func auth(_ credential: String) -> [String: String] { ["Authorization": "Bearer \(credential)"] }

    static func documentKeys(_ body: Data) -> Set<String> {
        let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any]
        let results = object?["results"] as? [[String: Any]] ?? []
        return Set(results.compactMap { $0["document_key"] as? String })
    }

    @Test("JWTs (RS256 from the JWKS file, HS256) read what their groups may; refusals counted in /metrics by reason")
    func jwtsIdentifyCallers() async throws {
        let ws = try Workspace("serve-identity-jwt")
        defer { ws.cleanUp() }
        let issuer = try TestTokenIssuer()
        defer { issuer.cleanUp() }
        let target = try ServeAccessCLITests.corpus(ws)
        try await ws.run(target, expecting: 0)
        let server = try await Self.serve(ws, target, try Self.jwtSettings(ws, issuer))

        let eng = try issuer.token(
            TestTokenIssuer.claims(["sub": "erin", "groups": ["eng"], "scope": "search"]),
            header: ["alg": "RS256", "kid": "r1"],
            signer: .rsa
        )
        let engSearch = try await server.exchange("POST", "/v1/search", body: Self.query, headers: Self.auth(eng))
        #expect(engSearch.status == 200)
        #expect(Self.documentKeys(engSearch.body) == ServeAccessCLITests.engReadable)
        // The Swift client sends a JWT as it sends a key.
        let hr = try issuer.token(
            TestTokenIssuer.claims(["sub": "hana", "groups": ["hr"], "scope": "search documents"]),
            header: ["alg": "HS256"],
            signer: .hmac(Array(Self.secret.utf8))
        )
        let hrResults = try await server.client(token: hr).search(SearchRequest(query: "salary payroll", k: 40))
        #expect(!hrResults.results.isEmpty)
        #expect(hrResults.results.allSatisfy { $0.documentKey.hasPrefix("hr/") || $0.documentKey == "handbook.md" })

        // Refusals: missing, invalid (alg none, a tampered payload, an unknown key), expired, forbidden.
        let none = try issuer.token(TestTokenIssuer.claims(["groups": ["hr"]]), header: ["alg": "none"], signer: .none)
        let parts = eng.split(separator: ".").map(String.init)
        let forgedClaims = try JSONSerialization.data(
            withJSONObject: TestTokenIssuer.claims(["sub": "erin", "groups": ["hr"], "scope": "search"])
        )
        let tampered = "\(parts[0]).\(Base64URLText.encode(forgedClaims)).\(parts[2])"
        let expired = try issuer.token(
            TestTokenIssuer.claims(["exp": Int(Date().timeIntervalSince1970) - 3600]),
            header: ["alg": "RS256", "kid": "r1"],
            signer: .rsa
        )
        #expect(try await server.exchange("POST", "/v1/search", body: Self.query).status == 401)
        for refused in [none, tampered, "not-a-key-0000"] {
            let answer = try await server.exchange("POST", "/v1/search", body: Self.query, headers: Self.auth(refused))
            #expect(answer.status == 401 && ServeProcess.errorCode(answer.body) == "unauthorized")
        }
        let late = try await server.exchange("POST", "/v1/search", body: Self.query, headers: Self.auth(expired))
        #expect(late.status == 401 && String(decoding: late.body, as: UTF8.self).contains("expired"))
        // The eng token has the search scope only.
        #expect(try await server.exchange("GET", "/v1/documents/handbook.md", headers: Self.auth(eng)).status == 403)

        let metrics = try await server.exchange(
            "GET",
            "/metrics",
            headers: Self.auth(ServeAccessCLITests.operatorToken)
        )
        let text = String(decoding: metrics.body, as: UTF8.self)
        #expect(text.contains(#"sluice_auth_failures_total{reason="missing"} 1"#), "\(text)")
        #expect(text.contains(#"sluice_auth_failures_total{reason="invalid"} 3"#))
        #expect(text.contains(#"sluice_auth_failures_total{reason="expired"} 1"#))
        #expect(text.contains(#"sluice_auth_failures_total{reason="forbidden"} 1"#))
        #expect(!text.contains("erin") && !text.contains(parts[1].prefix(20)) && !text.contains("not-a-key"))
        let result = try await server.stop()
        #expect(!result.stderr.contains(parts[2].prefix(20)) && !result.stderr.contains("not-a-key"))
    }

    @Test(
        "rate limits per key and principal (429, Retry-After), apart; the audit log names who, never the key; SIGHUP reopens it"
    )
    func rateLimitsAndTheAuditLog() async throws {
        let ws = try Workspace("serve-identity-limits")
        defer { ws.cleanUp() }
        let issuer = try TestTokenIssuer()
        defer { issuer.cleanUp() }
        let target = try ServeAccessCLITests.corpus(ws)
        try await ws.run(target, expecting: 0)
        // The eng key may make one request a minute; the hr key has no limit of its own (the default: 1).
        try
            (ServeAccessCLITests.firstKeys.replacingOccurrences(
                of: "    principal: emil\n",
                with: "    principal: emil\n    rate_limit_per_minute: 1\n"
            )
            + "  - {id: busy, sha256: \"\(ServeAccessCLITests.secondEngDigest)\", principal: bo, groups: [eng], scopes: [search], rate_limit_per_minute: 0}\n")
            .write(to: ws.file("keys.yaml"), atomically: true, encoding: .utf8)
        let audit = ws.file("audit.jsonl")
        let server = try await Self.serve(
            ws,
            target,
            try Self.jwtSettings(ws, issuer) + [
                "--set", "serve.rate_limit_per_minute=1", "--set", "serve.audit_log=\(audit.path)",
            ]
        )
        let search = { (credential: String) in
            try await server.exchange("POST", "/v1/search", body: Self.query, headers: Self.auth(credential))
        }
        #expect(try await search(ServeAccessCLITests.engKey).status == 200)
        let limited = try await search(ServeAccessCLITests.engKey)
        #expect(limited.status == 429 && ServeProcess.errorCode(limited.body) == "rate-limited")
        let retryAfter = Int(limited.headers["retry-after"] ?? "") ?? 0
        #expect((1...60).contains(retryAfter), "\(limited.headers)")
        // The Swift client says how long to wait.
        do {
            _ = try await server.client(token: ServeAccessCLITests.engKey).search(SearchRequest(query: "salary", k: 3))
            Issue.record("the second request of the minute passed")
        } catch let error as SluiceClientError {
            #expect(
                error.status == 429 && error.code == "rate-limited" && (1...60).contains(error.retryAfterSeconds ?? 0)
            )
        }
        // Other identities are not counted against it.
        #expect(try await search(ServeAccessCLITests.hrKey).status == 200)
        #expect(try await search(ServeAccessCLITests.hrKey).status == 429, "the default limit")
        for _ in 0..<5 { #expect(try await search(ServeAccessCLITests.secondEngKey).status == 200, "0: no limit") }
        let erin = try issuer.token(TestTokenIssuer.claims(), header: ["alg": "RS256", "kid": "r1"], signer: .rsa)
        let finn = try issuer.token(TestTokenIssuer.claims(["sub": "finn"]), header: ["alg": "RS256"], signer: .rsa)
        #expect(try await search(erin).status == 200)
        #expect(try await search(erin).status == 429)
        #expect(try await search(finn).status == 200)
        // The operator is never limited; an unreadable document reads as missing, and is audited as none shown.
        for _ in 0..<3 { #expect(try await search(ServeAccessCLITests.operatorToken).status == 200) }
        #expect(try await server.exchange("POST", "/v1/search", body: Self.query).status == 401)

        let lines = try String(contentsOf: audit, encoding: .utf8).split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        #expect(lines.count == 17, "one line per request to a route that reads documents: \(lines.count)")
        let first = try #require(lines.first)
        #expect(first["identity"] as? String == "key" && first["key_id"] as? String == "eng-app")
        #expect(first["principal"] as? String == "emil" && first["route"] as? String == "/v1/search")
        #expect(first["status"] as? Int == 200 && first["method"] as? String == "POST")
        #expect((1...5).contains(first["documents"] as? Int ?? 0) && first["time"] is String)
        // The filter the store's query ran with: the key's readers; the query text only when asked for.
        #expect(first["filter"] as? String == #"access in ("emil", "eng", "*")"#, "\(first)")
        #expect(first["query"] == nil, "\(first)")
        let operatorLine = try #require(lines.first { $0["identity"] as? String == "operator" })
        #expect(operatorLine["filter"] is NSNull, "\(operatorLine)")
        #expect(lines[1]["status"] as? Int == 429 && lines[2]["status"] as? Int == 429)
        #expect(lines.contains { $0["identity"] as? String == "jwt" && $0["principal"] as? String == "finn" })
        let refused = try #require(lines.last)
        #expect(
            refused["identity"] as? String == "none" && refused["status"] as? Int == 401
                && refused["principal"] is NSNull && refused["filter"] is NSNull
        )
        let raw = try String(contentsOf: audit, encoding: .utf8)
        for secret in [
            ServeAccessCLITests.engKey, ServeAccessCLITests.engDigest, ServeAccessCLITests.operatorToken, erin,
        ] {
            #expect(!raw.contains(secret))
        }

        // Rotation: rename the file, SIGHUP, and the next line goes to a new file of the old name.
        try FileManager.default.moveItem(at: audit, to: ws.file("audit.jsonl.1"))
        server.process.send(SIGHUP)
        let deadline = ContinuousClock.now + .seconds(60)
        while !FileManager.default.fileExists(atPath: audit.path) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(try await search(ServeAccessCLITests.operatorToken).status == 200)
        let reopened = try String(contentsOf: audit, encoding: .utf8).split(separator: "\n")
        #expect(reopened.count == 1)
        let result = try await server.stop()
        #expect(result.exitCode == 0, "\(result)")
    }

    @Test("serve.audit_query_text: each line of the audit log holds the query text and the filter the query ran with")
    func auditLogWithQueryText() async throws {
        let ws = try Workspace("serve-identity-audit-query")
        defer { ws.cleanUp() }
        let target = try ServeAccessCLITests.corpus(ws)
        try await ws.run(target, expecting: 0)
        let audit = ws.file("audit.jsonl")
        let server = try await ServeAccessCLITests.serve(
            ws,
            target,
            ["--set", "serve.audit_log=\(audit.path)", "--set", "serve.audit_query_text=true"]
        )
        let own = Data(#"{"query": "salary payroll", "k": 3, "filter": {"document_key": {"$ne": "x.md"}}}"#.utf8)
        #expect(
            try await server.exchange("POST", "/v1/search", body: own, headers: Self.auth(ServeAccessCLITests.engKey))
                .status == 200
        )
        let document = try await server.exchange(
            "GET",
            "/v1/documents/eng%2Fdesign-1.md",
            headers: Self.auth(ServeAccessCLITests.hrKey)
        )
        #expect(document.status == 404)
        let lines = try String(contentsOf: audit, encoding: .utf8).split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        #expect(lines.count == 2, "\(lines)")
        let search = try #require(lines.first)
        #expect(search["query"] as? String == "salary payroll", "\(search)")
        // The access filter ANDed with the caller's own: what the store's query ran with.
        #expect(
            search["filter"] as? String == #"(access in ("emil", "eng", "*")) and (document_key != "x.md")"#,
            "\(search)"
        )
        // A document read has no query text; its filter is the key's readers.
        let read = try #require(lines.last)
        #expect(read["query"] == nil && read["filter"] as? String == #"access in ("hana", "hr", "*")"#, "\(read)")
        _ = try await server.stop()
    }

    @Test("check validates serve.jwt: the secret's variable, the JWKS file; never printing either")
    func checkValidatesTheSettings() async throws {
        let ws = try Workspace("serve-identity-check")
        defer { ws.cleanUp() }
        let issuer = try TestTokenIssuer()
        defer { issuer.cleanUp() }
        let target = try ServeAccessCLITests.corpus(ws)
        try await ws.run(target, expecting: 0)
        let settings = try Self.jwtSettings(ws, issuer)
        let arguments = ["check", ws.pipeline.path] + target.arguments + settings
        let valid = try await ws.sluice(arguments, environment: ["SLUICE_TEST_JWT_SECRET": Self.secret])
        #expect(valid.exitCode == 0 && valid.stdout.contains("serve.jwt: HS256, RS256"), "\(valid)")
        #expect(!valid.stdout.contains(Self.secret))
        let unset = try await ws.sluice(arguments, environment: ["SLUICE_TEST_JWT_SECRET": nil])
        #expect(unset.exitCode != 0 && unset.stdout.contains("SLUICE_TEST_JWT_SECRET"), "\(unset)")
        try Data(#"{"keys": [{"kty": "RSA", "n": "AQAB", "e": "AQAB"}]}"#.utf8)
            .write(to: URL(fileURLWithPath: issuer.path("jwks.json")))
        let weak = try await ws.sluice(arguments, environment: ["SLUICE_TEST_JWT_SECRET": Self.secret])
        #expect(weak.exitCode != 0 && weak.stdout.contains("at least 2048"), "\(weak)")
        let missing = try await ws.sluice(
            ["check", ws.pipeline.path] + target.arguments + [
                "--set", "serve.jwt.jwks_file=\(issuer.path("jwks.json"))",
            ]
        )
        #expect(
            missing.exitCode != 0 && (missing.stdout + missing.stderr).contains("issuer and audience are required"),
            "\(missing)"
        )
    }
}

/// Base64url for the forged payload (the tests' own, not Sluice's).
enum Base64URLText {
    static func encode(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
