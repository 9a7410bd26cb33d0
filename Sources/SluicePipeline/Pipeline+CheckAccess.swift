import Foundation
import SluiceCore

extension Pipeline {
    /// `sluice check`'s lines on access control (docs/ACCESS.md): the `access` rules as the records will
    /// carry them, and `serve.keys_file` read and checked as `sluice serve` reads it (never printing a key
    /// or a digest). Nothing when the pipeline uses neither.
    func checkAccess() -> [DependencyCheck] {
        var checks: [DependencyCheck] = []
        let access = configuration.access
        if access.isEnabled {
            let rule = access.allowsByDefault ? "allow (everyone reads it)" : "deny (only the operator reads it)"
            checks.append(
                DependencyCheck(
                    "access",
                    .ok,
                    "access control on: each record's readers in the list field \(access.field); a document without any: \(rule)"
                )
            )
        }
        checks += checkJWT()
        checks += checkAuditAndLimits()
        guard let file = configuration.serve.keysFile else { return checks }
        do {
            let keys = try APIKeys.load(configuration.resolve(file))
            let groups = Set(keys.keys.flatMap(\.groups)).count
            var detail = "serve.keys_file: \(keys.keys.count) keys, \(groups) groups"
            if !access.isEnabled {
                detail += "; access control is off (access.enabled), so every key reads every record"
            }
            checks.append(DependencyCheck("access", .ok, detail))
        } catch {
            checks.append(Self.unusable("serve.keys_file", "the keys file", error))
        }
        return checks
    }

    /// `serve.jwt` as `sluice serve` will read it: the HS256 secret's variable set and long enough, the
    /// JWKS file readable with at least one RS256 or ES256 key (never printing a secret or a key).
    func checkJWT(environment: [String: String] = ProcessInfo.processInfo.environment) -> [DependencyCheck] {
        let jwt = configuration.serve.jwt
        guard jwt.isEnabled else { return [] }
        var checks: [DependencyCheck] = []
        var accepted: [String] = []
        if let name = jwt.hs256SecretEnvironment {
            let length = environment[name]?.utf8.count ?? 0
            if length >= 32 {
                accepted.append("HS256")
            } else {
                checks.append(
                    DependencyCheck(
                        "access",
                        .failed,
                        length == 0
                            ? "serve.jwt.hs256_secret_env names \(name), which is not set or empty"
                            : "serve.jwt.hs256_secret_env: the secret in \(name) is shorter than 32 bytes",
                        fix: "export \(name) with the issuer's HS256 secret (at least 32 bytes) before sluice serve"
                    )
                )
            }
        }
        if let file = jwt.jwksFile {
            do {
                let set = try JSONWebKeySet.load(configuration.resolve(file))
                let algorithms = Set(set.keys.map(\.material.algorithm)).sorted()
                accepted += algorithms
                let skipped = set.skipped > 0 ? ", \(set.skipped) of another kind skipped" : ""
                checks.append(
                    DependencyCheck(
                        "access",
                        .ok,
                        "serve.jwt.jwks_file: \(set.keys.count) keys (\(algorithms.joined(separator: ", ")))\(skipped)"
                    )
                )
            } catch {
                checks.append(Self.unusable("serve.jwt.jwks_file", "the JWKS file", error))
            }
        }
        if !accepted.isEmpty {
            checks.append(
                DependencyCheck(
                    "access",
                    .ok,
                    "serve.jwt: \(accepted.joined(separator: ", ")) tokens of issuer \(jwt.issuer) for audience \(jwt.audience); principal from \(jwt.principalClaim), groups from \(jwt.groupsClaim), scopes from \(jwt.scopesClaim ?? "scope or scp")"
                )
            )
        }
        return checks
    }

    /// `serve.audit_log` (its folder exists and the file can be appended to; nothing is written) and the
    /// rate limits in force.
    func checkAuditAndLimits() -> [DependencyCheck] {
        var checks: [DependencyCheck] = []
        let serve = configuration.serve
        if let file = serve.auditLog {
            let url = configuration.resolve(file)
            let manager = FileManager.default
            var isFolder: ObjCBool = false
            let exists = manager.fileExists(atPath: url.path, isDirectory: &isFolder)
            let writable =
                exists
                ? !isFolder.boolValue && manager.isWritableFile(atPath: url.path)
                : manager.isWritableFile(atPath: url.deletingLastPathComponent().path)
            checks.append(
                writable
                    ? DependencyCheck(
                        "access",
                        .ok,
                        "serve.audit_log: one JSON line per request that reads documents, appended to \(url.path)"
                    )
                    : DependencyCheck(
                        "access",
                        .failed,
                        "serve.audit_log: \(url.path) cannot be appended to (\(exists ? (isFolder.boolValue ? "a folder" : "not writable") : "its folder is missing or not writable"))",
                        fix: "create the folder or correct serve.audit_log; sluice serve will not start with it"
                    )
            )
        }
        if serve.rateLimitPerMinute > 0 {
            checks.append(
                DependencyCheck(
                    "access",
                    .ok,
                    "serve.rate_limit_per_minute: \(serve.rateLimitPerMinute) requests per minute for each key and JWT principal (a key's own rate_limit_per_minute wins)"
                )
            )
        }
        return checks
    }

    /// The check of a file `sluice serve` would refuse to start with.
    private static func unusable(_ setting: String, _ what: String, _ error: any Error) -> DependencyCheck {
        guard let error = error as? SluiceError else {
            return DependencyCheck("access", .failed, "\(setting): \(error)")
        }
        return DependencyCheck(
            "access",
            .failed,
            error.message,
            fix: "correct \(what) (docs/ACCESS.md shows its form); sluice serve will not start with it"
        )
    }
}
