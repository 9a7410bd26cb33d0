import Foundation
import SluiceCore

/// The keys the S3 source signs with, found as the AWS CLI finds them: the variables the pipeline names
/// (`source.s3.access_key_env`, `secret_key_env`, `session_token_env`), else `AWS_ACCESS_KEY_ID`,
/// `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN`, else the shared credentials file
/// (`AWS_SHARED_CREDENTIALS_FILE`, else `~/.aws/credentials`) under the profile (`source.s3.profile`, else
/// `AWS_PROFILE`, else `default`).
///
/// Never printed: ``description`` names where the keys came from, not what they are.
struct S3Credentials: Sendable, CustomStringConvertible {
    var accessKey: String
    var secretKey: String
    var sessionToken: String?
    /// Where they were found (`the variables AWS_ACCESS_KEY_ID/…`, `profile default of ~/.aws/credentials`).
    var origin: String

    var description: String { "credentials from \(origin)" }

    /// - Parameter section: the settings' section, named in errors (`source.s3`, `generations.s3`).
    /// - Throws: ``SluiceError/Code/configuration`` when none are found, or a named variable is unset.
    static func resolve(
        _ settings: PipelineConfiguration.Source.S3,
        section: String = "source.s3",
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> S3Credentials {
        func value(_ name: String) -> String? {
            environment[name].flatMap { $0.isEmpty ? nil : $0 }
        }
        if let keyName = settings.accessKeyEnv, let secretName = settings.secretKeyEnv {
            guard let key = value(keyName), let secret = value(secretName) else {
                throw SluiceError(
                    .configuration,
                    "\(section): the variables \(keyName) and \(secretName) (access_key_env, secret_key_env) must both be set"
                )
            }
            var token: String?
            if let tokenName = settings.sessionTokenEnv {
                guard let value = value(tokenName) else {
                    throw SluiceError(
                        .configuration,
                        "\(section).session_token_env names \(tokenName), which is not set"
                    )
                }
                token = value
            }
            return S3Credentials(
                accessKey: key,
                secretKey: secret,
                sessionToken: token,
                origin: "the variables \(keyName) and \(secretName)"
            )
        }
        if let key = value("AWS_ACCESS_KEY_ID"), let secret = value("AWS_SECRET_ACCESS_KEY") {
            return S3Credentials(
                accessKey: key,
                secretKey: secret,
                sessionToken: value("AWS_SESSION_TOKEN"),
                origin: "the variables AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
            )
        }
        let profile = settings.profile ?? value("AWS_PROFILE") ?? "default"
        let path =
            value("AWS_SHARED_CREDENTIALS_FILE").map { NSString(string: $0).expandingTildeInPath }
            ?? (value("HOME") ?? NSHomeDirectory()) + "/.aws/credentials"
        if let text = try? String(contentsOfFile: path, encoding: .utf8),
            let found = sharedFileProfile(text, profile: profile),
            let key = found["aws_access_key_id"], let secret = found["aws_secret_access_key"]
        {
            return S3Credentials(
                accessKey: key,
                secretKey: secret,
                sessionToken: found["aws_session_token"],
                origin: "profile \(profile) of \(path)"
            )
        }
        throw SluiceError(
            .configuration,
            "\(section): no credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, name variables in \(section).access_key_env and secret_key_env, or add profile \(profile) to \(path)"
        )
    }

    /// The `key = value` lines of `[profile]` in a shared credentials file (INI, `#` and `;` comments).
    static func sharedFileProfile(_ text: String, profile: String) -> [String: String]? {
        var current: String?
        var found: [String: String]?
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                current = line.dropFirst().dropLast().trimmingCharacters(in: .whitespaces)
                if current == profile, found == nil { found = [:] }
                continue
            }
            guard current == profile, let equals = line.firstIndex(of: "=") else { continue }
            let name = line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if !value.isEmpty { found?[name] = value }
        }
        return found
    }
}
