import Foundation
import SluiceCore
import Testing

/// Issue 37: a key a server echoes back in another form than it was sent is redacted all the same.
@Suite struct EnvironmentSecretRedactionTests {
    /// A key with characters that URL-encoding and JSON-escaping change (`/`, `+`, `=`, `:`, a space).
    static let key = "Zq9/+k=Tok en:AbCdEf0123"

    /// The echoes of ``key`` a server may send, by the form's name.
    static let echoes: [(String, String)] = {
        let percent = key.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let query = key.addingPercentEncoding(
            withAllowedCharacters: CharacterSet(
                charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
            )
        )!
        let json = String(decoding: try! JSONEncoder().encode([key]), as: UTF8.self)
        return [
            ("as sent", key),
            ("upper case", key.uppercased()),
            ("lower case", key.lowercased()),
            ("percent-encoded", percent),
            ("percent-encoded, lower-case hex", percent.replacingOccurrences(of: "%2F", with: "%2f")),
            ("percent-encoded, unreserved kept", query),
            ("form-encoded", query.replacingOccurrences(of: "%20", with: "+")),
            ("percent-encoded, upper case", percent.uppercased()),
            ("JSON-escaped", String(json.dropFirst(2).dropLast(2))),
            // Python's urllib.parse.quote keeps `/` (seen leaking in the campaign of session 46).
            ("percent-encoded, / kept", percent.replacingOccurrences(of: "%2F", with: "/")),
            (
                "encodeURIComponent",
                key.addingPercentEncoding(
                    withAllowedCharacters: CharacterSet(
                        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!'()*"
                    )
                )!
            ),
            ("base64 of user:key", Data("apikey:\(key)".utf8).base64EncodedString()),
            ("base64 of u:key", Data("u:\(key)".utf8).base64EncodedString()),
            ("base64 of :key", Data(":\(key)".utf8).base64EncodedString()),
        ]
    }()

    @Test(arguments: echoes)
    func anEchoedKeyIsRedactedInEachForm(echo: (String, String)) {
        let message = "HTTP 401: invalid key '\(echo.1)' (see the docs)"
        let redacted = EnvironmentSecret.redacting(Self.key, in: message)
        #expect(redacted.contains("<redacted>"), "\(echo.0): \(redacted)")
        #expect(redacted.hasPrefix("HTTP 401: invalid key '") && redacted.hasSuffix("' (see the docs)"))
        // No run of 8 characters of the echo survives (in base64, the groups that mix the key's first or
        // last bytes with their neighbours are not the key's alone: they are left).
        guard !echo.0.hasPrefix("base64") else { return }
        let survivor = Array(echo.1)
        let leaked = (0...max(0, survivor.count - 8)).contains { start in
            start + 8 <= survivor.count && redacted.contains(String(survivor[start..<(start + 8)]))
        }
        #expect(!leaked, "\(echo.0): part of the key survives in \(redacted)")
    }

    @Test func anOpenAIShapedKeyIsRedactedInAnyCase() {
        #expect(EnvironmentSecret.redacting(nil, in: "bad key SK-AB***YZ") == "bad key sk-<redacted>")
        #expect(EnvironmentSecret.redacting(nil, in: "bad key sk-ab***yz") == "bad key sk-<redacted>")
    }

    @Test func ordinaryTextAndShortSecretsAreLeftAlone() {
        let message = "the collection Docs was not found at /v1/collections/docs"
        #expect(EnvironmentSecret.redacting("DOCS", in: message) == message)
        #expect(EnvironmentSecret.redacting("another-long-secret", in: message) == message)
        #expect(EnvironmentSecret.redacting([], in: message) == message)
    }

    @Test func everySecretOfAListIsRedacted() {
        let redacted = EnvironmentSecret.redacting(
            ["first-secret", "second/secret"],
            in: "first-secret second%2Fsecret"
        )
        #expect(redacted == "<redacted> <redacted>")
    }
}
