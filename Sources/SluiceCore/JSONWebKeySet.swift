import Foundation

/// The public keys bearer JWTs are verified with (`serve.jwt.jwks_file`, docs/ACCESS.md): a JSON Web Key
/// Set (RFC 7517) as an identity provider publishes it, read from a file so that no request waits on a
/// network call. RSA keys (RS256, at least 2048 bits) and P-256 keys (ES256) are taken; a key of another
/// type, or meant for encryption (`use: enc`), is skipped, as a provider's set may hold such keys.
///
/// Only the numbers are read here (no cryptography): `sluice check` validates the file as `serve` will,
/// and `serve` builds its libcrypto keys from them.
package struct JSONWebKeySet: Sendable, Equatable {
    package enum Material: Sendable, Equatable {
        /// Modulus and public exponent, big-endian.
        case rsa(modulus: [UInt8], exponent: [UInt8])
        /// The point's coordinates on P-256, 32 bytes each.
        case p256(x: [UInt8], y: [UInt8])

        /// The one JWS algorithm the key verifies (a key never verifies another: algorithm confusion).
        package var algorithm: String {
            switch self {
            case .rsa: "RS256"
            case .p256: "ES256"
            }
        }
    }

    package struct Key: Sendable, Equatable {
        /// The key's `kid`; nil when the set names none.
        package var id: String?
        package var material: Material
    }

    package var keys: [Key]
    /// How many keys of the file were skipped (another type, curve or use).
    package var skipped: Int = 0

    /// Reads and checks the file at `url`.
    /// - Throws: ``SluiceError/Code/configuration`` naming the file and what is wrong.
    package static func load(_ url: URL) throws -> JSONWebKeySet {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw SluiceError(
                .configuration,
                "serve.jwt.jwks_file: cannot read \(url.path): \(error.localizedDescription)"
            )
        }
        return try parse(data, name: url.lastPathComponent)
    }

    /// Parses a JWKS document (`name` is how messages call it).
    package static func parse(_ data: Data, name: String) throws -> JSONWebKeySet {
        func problem(_ message: String) -> SluiceError {
            SluiceError(.configuration, "serve.jwt.jwks_file \(name): \(message)")
        }
        guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let list = root["keys"] as? [Any]
        else { throw problem("expected a JSON object with keys: a list of JSON Web Keys") }
        var set = JSONWebKeySet(keys: [])
        var ids = Set<String>()
        for (index, item) in list.enumerated() {
            guard let jwk = item as? [String: Any], let type = jwk["kty"] as? String else {
                throw problem("keys[\(index)]: expected an object with kty")
            }
            let id = jwk["kid"] as? String
            let label = id.map { "key \($0)" } ?? "keys[\(index)]"
            if let use = jwk["use"] as? String, use != "sig" {
                set.skipped += 1
                continue
            }
            func field(_ name: String) throws -> [UInt8] {
                guard let text = jwk[name] as? String, let bytes = Base64URL.decode(text), !bytes.isEmpty else {
                    throw problem("\(label): \(name) must be base64url (RFC 7518)")
                }
                return bytes
            }
            let material: Material
            switch type {
            case "RSA":
                let modulus = Array(try field("n").drop { $0 == 0 })
                let exponent = try field("e")
                guard modulus.count * 8 >= 2048 else {
                    throw problem("\(label): an RSA key of \(modulus.count * 8) bits; RS256 needs at least 2048")
                }
                material = .rsa(modulus: modulus, exponent: exponent)
            case "EC":
                guard jwk["crv"] as? String == "P-256" else {
                    set.skipped += 1
                    continue
                }
                let x = try field("x")
                let y = try field("y")
                guard x.count == 32, y.count == 32 else { throw problem("\(label): P-256 x and y are 32 bytes each") }
                material = .p256(x: x, y: y)
            default:
                set.skipped += 1
                continue
            }
            if let algorithm = jwk["alg"] as? String, algorithm != material.algorithm {
                throw problem("\(label): alg \(algorithm) does not fit a key of type \(type) (\(material.algorithm))")
            }
            if let id, !ids.insert(id).inserted { throw problem("the kid \(id) is used twice") }
            set.keys.append(Key(id: id, material: material))
        }
        if set.keys.isEmpty { throw problem("no RSA or P-256 signing key in it") }
        return set
    }
}

/// Base64url without padding (RFC 4648 §5), as JWTs and JSON Web Keys write bytes.
package enum Base64URL {
    /// The bytes `text` encodes; nil when it is not base64url (padding is tolerated).
    package static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var standard = String(text).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.hasSuffix("=") { standard.removeLast() }
        guard !standard.contains("=") else { return nil }
        switch standard.count % 4 {
        case 1: return nil
        case 2: standard += "=="
        case 3: standard += "="
        default: break
        }
        return Data(base64Encoded: standard).map { Array($0) }
    }

    /// `bytes` as base64url without padding.
    package static func encode(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
