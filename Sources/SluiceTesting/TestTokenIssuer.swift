import Foundation
import SluiceCore

/// An identity provider for the JWT tests (SluiceServeTests, SluiceCLITests): an RSA (2048-bit) and a P-256 key made by the `openssl` CLI in a
/// temporary folder, the JWKS of their public halves, and tokens signed by the CLI (RS256, ES256, and HS256
/// with any secret), so that Sluice's verifier is checked against signatures it did not make. Nothing is
/// stored: every run makes new keys.
public struct TestTokenIssuer {
    public let folder: URL
    public static let issuer = "https://issuer.test"
    public static let audience = "sluice-test"

    public init() throws {
        folder = try TemporaryDirectory.make("jwt-issuer")
        try Self.openssl(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", path("rsa.pem")])
        try Self.openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path("ec.pem")])
        try Self.openssl(["pkey", "-in", path("rsa.pem"), "-pubout", "-out", path("rsa.pub")])
    }

    public func cleanUp() { TemporaryDirectory.remove(folder) }

    public func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// The RSA public key as PEM (the text an algorithm-confusion attack uses as an HMAC secret).
    public var rsaPublicPEM: [UInt8] { Array((try? Data(contentsOf: URL(fileURLWithPath: path("rsa.pub")))) ?? Data()) }

    /// The JWK of the RSA key (`kid` as given).
    public func rsaJWK(kid: String?) throws -> [String: Any] {
        let text = String(
            decoding: try Self.openssl(["rsa", "-pubin", "-in", path("rsa.pub"), "-modulus", "-noout"]),
            as: UTF8.self
        )
        let hex = text.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "Modulus=", with: "")
        var jwk: [String: Any] = ["kty": "RSA", "n": Base64URL.encode(Self.bytes(hex: hex)), "e": "AQAB", "use": "sig"]
        jwk["kid"] = kid
        return jwk
    }

    /// The JWK of the P-256 key (`kid` as given).
    public func ecJWK(kid: String?) throws -> [String: Any] {
        // The SubjectPublicKeyInfo's last 65 bytes are the uncompressed point 04 || x || y.
        let der = try Self.openssl(["pkey", "-in", path("ec.pem"), "-pubout", "-outform", "DER"])
        let point = Array(der.suffix(65))
        var jwk: [String: Any] = [
            "kty": "EC", "crv": "P-256", "x": Base64URL.encode(point[1...32]), "y": Base64URL.encode(point[33...64]),
        ]
        jwk["kid"] = kid
        return jwk
    }

    /// Writes a JWKS of `keys` to `name` in the folder and returns its URL.
    @discardableResult
    public func writeJWKS(_ keys: [[String: Any]], to name: String = "jwks.json") throws -> URL {
        let url = folder.appendingPathComponent(name)
        let data = try JSONSerialization.data(withJSONObject: ["keys": keys])
        // Replaced by a rename, as a deployment tool writes it.
        let temporary = folder.appendingPathComponent(name + ".new")
        try data.write(to: temporary)
        // rename(2), not FileManager.replaceItemAt, which on Linux fails when there is no file to replace yet.
        guard rename(temporary.path, url.path) == 0 else {
            throw SluiceError(.io, "cannot rename \(temporary.lastPathComponent) (errno \(errno))")
        }
        return url
    }

    /// Claims valid now for the test issuer and audience, with `extra` over them.
    public static func claims(_ extra: [String: Any] = [:], now: Date = Date()) -> [String: Any] {
        var claims: [String: Any] = [
            "iss": issuer, "aud": audience, "sub": "erin", "exp": Int(now.timeIntervalSince1970) + 300,
            "scope": "search ask", "groups": ["eng"],
        ]
        for (key, value) in extra { claims[key] = value }
        return claims
    }

    public enum Signer: Sendable {
        case rsa, ec
        case hmac([UInt8])
        /// No signature at all (`alg: none`).
        case none
    }

    /// A compact JWS of `claims` with `header` (alg and kid as given), signed by `signer`.
    public func token(_ claims: [String: Any], header: [String: Any], signer: Signer) throws -> String {
        let head = Base64URL.encode(try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys]))
        let body = Base64URL.encode(try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys]))
        let input = Data("\(head).\(body)".utf8)
        let signature: [UInt8]
        switch signer {
        case .rsa: signature = Array(try Self.openssl(["dgst", "-sha256", "-sign", path("rsa.pem")], input: input))
        case .ec:
            signature = Self.raw(
                der: Array(try Self.openssl(["dgst", "-sha256", "-sign", path("ec.pem")], input: input))
            )
        case .hmac(let secret):
            let hex = secret.map { String(format: "%02x", $0) }.joined()
            signature = Array(
                try Self.openssl(
                    ["dgst", "-sha256", "-mac", "HMAC", "-macopt", "hexkey:\(hex)", "-binary"],
                    input: input
                )
            )
        case .none: signature = []
        }
        return "\(head).\(body).\(Base64URL.encode(signature))"
    }

    /// The JWS form (r || s, 32 bytes each) of a DER ECDSA signature.
    static func raw(der: [UInt8]) -> [UInt8] {
        // 30 len 02 rlen r 02 slen s (lengths below 128 for P-256).
        var index = 2
        var out: [UInt8] = []
        for _ in 0..<2 {
            let length = Int(der[index + 1])
            var integer = Array(der[(index + 2)..<(index + 2 + length)])
            while integer.count > 32 && integer.first == 0 { integer.removeFirst() }
            out += [UInt8](repeating: 0, count: 32 - integer.count) + integer
            index += 2 + length
        }
        return out
    }

    static func bytes(hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var iterator = hex.makeIterator()
        while let high = iterator.next(), let low = iterator.next() {
            bytes.append(UInt8(String([high, low]), radix: 16) ?? 0)
        }
        return bytes
    }

    /// Runs the `openssl` CLI and returns its standard output.
    @discardableResult
    public static func openssl(_ arguments: [String], input: Data? = nil) throws -> Data {
        guard
            let executable = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first(where: {
                FileManager.default.isExecutableFile(atPath: $0)
            })
        else {
            throw SluiceError(.configuration, "the openssl CLI is missing (scripts/setup.sh test installs it)")
        }
        // Files, not pipes (ChildOutput): the suite once stalled reading openssl's output from a pipe.
        let result = try ChildOutput.run(executable, arguments, input: input)
        guard result.exit.status == 0, !result.exit.signaled else {
            throw SluiceError(.io, "openssl \(arguments.first ?? "") failed (\(result.exit.status))")
        }
        return result.output
    }
}
