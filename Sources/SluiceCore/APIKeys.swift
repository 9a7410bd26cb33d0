import Foundation

/// The API keys `sluice serve` accepts (`serve.keys_file`, docs/ACCESS.md): each kept as the SHA-256 of
/// the key, never the key, with the identity it stands for and what it may do.
///
/// ```yaml
/// keys:
///   - id: intern-app          # named in logs, never the key
///     sha256: 5e884898da28…   # printf %s "$KEY" | sha256sum
///     principal: intern
///     groups: [staff]
///     scopes: [search, ask]   # of search, ask, documents, export, runs, metrics
///     rate_limit_per_minute: 120   # optional: this key's own limit (0: none), over serve.rate_limit_per_minute
/// ```
package struct APIKeys: Sendable, Equatable {
    package struct Key: Sendable, Equatable {
        package var id: String
        package var digest: [UInt8]
        package var principal: String
        package var groups: [String]
        package var scopes: Set<Scope>
        /// This key's own requests per minute (0: no limit); nil: `serve.rate_limit_per_minute`.
        package var rateLimitPerMinute: Int? = nil
    }

    /// What a key may call: `search` (`POST /v1/search`), `ask` (`POST /v1/ask`), `documents`
    /// (`/v1/documents…`), `export` (`GET /v1/export`: every readable record with its vector, in bulk),
    /// `runs` (`/v1/runs…`), `metrics` (`/metrics`).
    package enum Scope: String, Sendable, CaseIterable {
        case search, ask, documents, export, runs, metrics
    }

    package var keys: [Key]

    /// The key whose digest is `SHA-256(presented)`: every key is compared, each in constant time, so
    /// the time taken says nothing about which key (or how much of one) matched.
    package func identify(_ presented: [UInt8]) -> Key? {
        let digest = SHA256.digest(presented)
        var found: Key?
        for key in keys where SHA256.constantTimeEqual(key.digest, digest) { found = key }
        return found
    }

    /// Reads and checks the file at `url`.
    /// - Throws: ``SluiceError/Code/configuration`` naming the file and what is wrong (never a key).
    package static func load(_ url: URL) throws -> APIKeys {
        let text: String
        do {
            text = try String(contentsOf: url, encoding: .utf8)
        } catch {
            throw SluiceError(.configuration, "serve.keys_file: cannot read \(url.path): \(error.localizedDescription)")
        }
        return try parse(text, name: url.lastPathComponent)
    }

    /// Parses the file's text (`name` is how messages call it).
    package static func parse(_ text: String, name: String) throws -> APIKeys {
        func problem(_ message: String) -> SluiceError {
            SluiceError(.configuration, "serve.keys_file \(name): \(message)")
        }
        let loaded: Any?
        do {
            // The file's lines are never quoted: they hold digests, and a key pasted by mistake.
            loaded = try BoundedYAML.load(text, quoting: false)
        } catch let error as SluiceError {
            throw problem("not YAML (or JSON) that can be read: \(error.message)")
        }
        guard let root = loaded as? [String: Any], let list = root["keys"] as? [Any],
            Set(root.keys) == ["keys"]
        else { throw problem("expected a mapping with one key, keys: a list of keys") }
        var keys: [Key] = []
        var ids = Set<String>()
        var digests = Set<[UInt8]>()
        for (index, item) in list.enumerated() {
            guard let entry = item as? [String: Any] else { throw problem("keys[\(index)]: expected a mapping") }
            let known: Set<String> = ["id", "sha256", "principal", "groups", "scopes", "rate_limit_per_minute"]
            if let unknown = entry.keys.sorted().first(where: { !known.contains($0) }) {
                throw problem(
                    "keys[\(index)]: unknown field \(unknown) (id, sha256, principal, groups, scopes, rate_limit_per_minute)"
                )
            }
            guard let id = entry["id"] as? String, !id.isEmpty else {
                throw problem("keys[\(index)]: id (a non-empty text) is required")
            }
            guard ids.insert(id).inserted else { throw problem("keys[\(index)]: the id \(id) is used twice") }
            guard let hex = entry["sha256"] as? String, let digest = Self.bytes(hex: hex) else {
                throw problem(
                    "key \(id): sha256 must be the key's SHA-256 as 64 hexadecimal digits (printf %s \"$KEY\" | sha256sum), never the key itself"
                )
            }
            guard digests.insert(digest).inserted else { throw problem("key \(id): the same sha256 as another key") }
            guard let principal = entry["principal"] as? String, !principal.isEmpty else {
                throw problem("key \(id): principal (a non-empty text) is required")
            }
            let groups = try strings(entry["groups"], "key \(id): groups", problem)
            let names = try strings(entry["scopes"], "key \(id): scopes", problem)
            var scopes = Set<Scope>()
            for name in names {
                guard let scope = Scope(rawValue: name) else {
                    throw problem(
                        "key \(id): unknown scope \(name) (\(Scope.allCases.map(\.rawValue).joined(separator: ", ")))"
                    )
                }
                scopes.insert(scope)
            }
            if scopes.isEmpty {
                let names = Scope.allCases.map(\.rawValue).joined(separator: ", ")
                throw problem("key \(id): scopes must name at least one of \(names)")
            }
            var limit: Int?
            if let value = entry["rate_limit_per_minute"] {
                guard let number = value as? Int, number >= 0 else {
                    throw problem("key \(id): rate_limit_per_minute must be a whole number ≥ 0 (0: no limit)")
                }
                limit = number
            }
            keys.append(
                Key(
                    id: id,
                    digest: digest,
                    principal: principal,
                    groups: groups,
                    scopes: scopes,
                    rateLimitPerMinute: limit
                )
            )
        }
        return APIKeys(keys: keys)
    }

    private static func strings(
        _ value: Any?,
        _ what: String,
        _ problem: (String) -> SluiceError
    ) throws -> [String] {
        guard let value else { return [] }
        guard let list = value as? [Any], let texts = list as? [String], !texts.contains(where: \.isEmpty) else {
            throw problem("\(what): a list of non-empty texts")
        }
        return texts
    }

    /// 32 bytes from 64 hexadecimal digits (either case); nil otherwise.
    static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count == 64 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: 64, by: 2) {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
