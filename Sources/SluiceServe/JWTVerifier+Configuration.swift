import Foundation
import SluiceCore

extension JWTVerifier {
    /// The verifier `serve.jwt` describes: the HS256 secret read from its variable, the JWKS file read (and
    /// then read again when it changes, ``KeyFilesWatch``). Blocks (file I/O).
    /// - Throws: ``SluiceError/Code/configuration`` when the variable is unset or shorter than 32 bytes
    ///   (RFC 7518 §3.2: at least the hash's size), or the JWKS file cannot be used.
    init(
        settings: PipelineConfiguration.Serve.JWT,
        configuration: PipelineConfiguration,
        environment: [String: String]
    ) throws {
        var secret: [UInt8]?
        if let name = settings.hs256SecretEnvironment {
            guard let value = environment[name], !value.isEmpty else {
                throw SluiceError(
                    .configuration,
                    "serve.jwt.hs256_secret_env names \(name), which is not set or empty: export \(name)=<the issuer's HS256 secret>"
                )
            }
            guard value.utf8.count >= 32 else {
                throw SluiceError(
                    .configuration,
                    "serve.jwt.hs256_secret_env: the secret in \(name) is shorter than 32 bytes (HS256 needs at least 256 bits)"
                )
            }
            secret = Array(value.utf8)
        }
        let keys = try settings.jwksFile.map { file in
            try ReloadingFile<[JSONWebPublicKey]>(
                url: configuration.resolve(file),
                setting: "serve.jwt.jwks_file",
                load: { url in try JSONWebKeySet.load(url).keys.map(JSONWebPublicKey.init) },
                describe: { "\($0.count) keys" }
            )
        }
        self.init(settings: settings, secret: secret, keys: keys)
    }
}
