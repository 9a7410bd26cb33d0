import CLibCrypto
import SluiceCore

/// One key of the JWKS file as libcrypto verifies with it (RS256 or ES256): built once when the file is
/// read, shared by every request.
///
/// `@unchecked Sendable`: an `EVP_PKEY` is not changed after it is built, and OpenSSL 3 allows concurrent
/// verifications with one key; it is freed in `deinit` only.
final class JSONWebPublicKey: @unchecked Sendable {
    let id: String?
    /// `RS256` or `ES256`: the only algorithm this key verifies.
    let algorithm: String
    private let key: OpaquePointer

    /// - Throws: ``SluiceError/Code/configuration`` when the numbers are not a key (an EC point off the curve).
    init(_ key: JSONWebKeySet.Key) throws {
        id = key.id
        algorithm = key.material.algorithm
        let made: OpaquePointer?
        switch key.material {
        case .rsa(let modulus, let exponent):
            made = sluice_crypto_rsa_public_key(modulus, modulus.count, exponent, exponent.count)
        case .p256(let x, let y):
            let point: [UInt8] = [0x04] + x + y
            made = sluice_crypto_p256_public_key(point, point.count)
        }
        guard let made else {
            throw SluiceError(
                .configuration,
                "serve.jwt.jwks_file: \(key.id.map { "key \($0)" } ?? "a key") is not a valid \(algorithm) public key"
            )
        }
        self.key = made
    }

    deinit { sluice_crypto_free_key(key) }

    /// Whether `signature` (as a JWS carries it) signs `input` with this key.
    func verifies(_ signature: [UInt8], of input: [UInt8]) -> Bool {
        var signature = signature
        if algorithm == "ES256" {
            // JWS writes r || s; libcrypto verifies the DER form.
            guard signature.count == 64 else { return false }
            var der = [UInt8](repeating: 0, count: 80)
            let length = sluice_crypto_ecdsa_der(signature, &der, der.count)
            guard length > 0 else { return false }
            signature = Array(der[..<length])
        }
        return sluice_crypto_verify_sha256(key, input, input.count, signature, signature.count) == 1
    }

    /// HMAC-SHA256 of `input` under `secret` (HS256).
    static func hmacSHA256(_ input: [UInt8], secret: [UInt8]) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: 32)
        guard sluice_crypto_hmac_sha256(secret, secret.count, input, input.count, &out) == 1 else { return nil }
        return out
    }
}
