import Foundation

/// Secrets (API keys, passwords) come from the environment variables a pipeline file names
/// (`embed.api_key_env`, `sink.api_key_env`, `sink.password_env`, `extract.pdf.password_env`), never from
/// the file itself.
///
/// The one place Sluice reads them: an error names the key and the variable, never a value, so no
/// message, log line or state record can carry a secret.
package enum EnvironmentSecret {
    /// How much a caller needs the secret.
    package enum Need: Sendable {
        /// The key may be unset and the variable empty or unset: then there is no secret (nil).
        case optional
        /// The key may be unset (no secret), but a variable it names must be set and non-empty.
        case ifNamed
        /// The key must name a variable, and that variable must be set and non-empty.
        case required
    }

    /// The value of the variable `variable` names (an empty name counts as none; an empty value as unset).
    /// - Parameters:
    ///   - variable: the variable's name, as the pipeline file gives it at `key`.
    ///   - key: the pipeline file's key (`sink.api_key_env`), for messages.
    ///   - need: when a missing name or value is an error.
    ///   - environment: the process environment, or another for tests.
    /// - Returns: the secret, or nil when there is none and `need` allows it.
    /// - Throws: ``SluiceError/Code/configuration`` naming `key` and `variable`, never a value.
    package static func value(
        of variable: String?,
        key: String,
        need: Need,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> String? {
        guard let variable, !variable.isEmpty else {
            guard need != .required else {
                throw SluiceError(.configuration, "\(key): name the environment variable that holds the secret")
            }
            return nil
        }
        guard let value = environment[variable], !value.isEmpty else {
            guard need == .optional else {
                throw SluiceError(.configuration, "\(key): the environment variable \(variable) is not set or empty")
            }
            return nil
        }
        return value
    }
}
