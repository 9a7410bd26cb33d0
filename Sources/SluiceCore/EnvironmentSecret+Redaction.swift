import Foundation

extension EnvironmentSecret {
    /// `message` without `secret` and without anything shaped like an OpenAI key (`sk-…`): some providers
    /// echo part of a key they refuse ("Incorrect API key provided: sk-ab***yz").
    ///
    /// The one scrubbing of provider messages, for the remote embedders and `sluice ask` alike.
    package static func redacting(_ secret: String?, in message: String) -> String {
        var text = message
        if let secret, !secret.isEmpty {
            text = text.replacingOccurrences(of: secret, with: "<redacted>")
        }
        return text.replacingOccurrences(
            of: #"sk-[A-Za-z0-9_\-\*\.]{2,}"#,
            with: "sk-<redacted>",
            options: .regularExpression
        )
    }
}
