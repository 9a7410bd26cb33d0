import Foundation

extension EnvironmentSecret {
    /// `message` without `secret` and without anything shaped like an OpenAI key (`sk-…`): some providers
    /// echo part of a key they refuse ("Incorrect API key provided: sk-ab***yz").
    ///
    /// The one scrubbing of provider messages, for the remote embedders, the stores and `sluice ask` alike.
    /// A server may echo the key in another form than it was sent: URL-encoded (a query or a path it
    /// rebuilt, `%2F` or `%2f`), in upper or lower case, JSON-escaped (`\/`, `\u002b`), or base64-encoded
    /// as in a `Basic` authorization of `user:key`. Each form is found (``forms(of:)``) and redacted.
    package static func redacting(_ secret: String?, in message: String) -> String {
        redacting([secret].compactMap { $0 }, in: message)
    }

    /// `message` without any of `secrets`, in any of the forms of ``forms(of:)``.
    package static func redacting(_ secrets: [String], in message: String) -> String {
        var text = message
        for secret in secrets where !secret.isEmpty {
            text = text.replacingOccurrences(of: secret, with: "<redacted>")
            // Short values would match ordinary words once case and encodings are ignored.
            guard secret.utf8.count >= minimumEncodedLength else { continue }
            for form in forms(of: secret) where text.range(of: form.text, options: form.options) != nil {
                text = text.replacingOccurrences(of: form.text, with: "<redacted>", options: form.options)
            }
        }
        return text.replacingOccurrences(
            of: #"(?i)sk-[A-Za-z0-9_\-\*\.]{2,}"#,
            with: "sk-<redacted>",
            options: .regularExpression
        )
    }

    /// Secrets shorter than this (in bytes) are redacted only as they are, not in their encoded forms.
    static let minimumEncodedLength = 6

    /// A form of a secret to look for, and how to compare it.
    package struct Form: Sendable {
        package var text: String
        package var options: String.CompareOptions
    }

    /// The forms in which a server may echo `secret` back, longest first: as it is, percent-encoded
    /// (unreserved characters kept, or every byte but letters and digits, or what common encoders keep
    /// besides; `+` for a space as forms encode it), JSON-escaped (`\/`, `\"`, `\\`, control and non-ASCII characters as `\uXXXX`), each
    /// compared without regard to case (hex digits, and a key upper-cased by the server); and the parts of
    /// its base64 encoding that do not depend on what precedes it (`user:secret` in a `Basic`
    /// authorization, at any of the three alignments), compared exactly.
    package static func forms(of secret: String) -> [Form] {
        var texts: [String] = [secret]
        let bytes = Array(secret.utf8)
        texts.append(percentEncoded(bytes, keeping: unreserved))
        texts.append(percentEncoded(bytes, keeping: alphanumerics))
        // What common encoders keep besides: Python's `quote` (`/`), JavaScript's `encodeURIComponent`
        // (`!'()*`) and `encodeURI`, and a URL path's characters (RFC 3986 `pchar`).
        for kept in ["/", "!'()*", ";,/?:@&=+$#!'()*", "!$&'()*+,;=:@/"] {
            texts.append(percentEncoded(bytes, keeping: unreserved.union(kept.utf8)))
        }
        texts.append(percentEncoded(bytes, keeping: unreserved).replacingOccurrences(of: "%20", with: "+"))
        texts.append(jsonEscaped(secret, asciiOnly: false))
        texts.append(jsonEscaped(secret, asciiOnly: true))
        var forms: [Form] = []
        for text in texts where !forms.contains(where: { $0.text == text }) {
            forms.append(Form(text: text, options: .caseInsensitive))
        }
        for core in base64Cores(bytes) where core.count >= minimumEncodedLength {
            forms.append(Form(text: core, options: .literal))
        }
        return forms.sorted { $0.text.count > $1.text.count }
    }

    private static let unreserved = Set(
        Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)
    )
    private static let alphanumerics = Set(Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8))

    private static func percentEncoded(_ bytes: [UInt8], keeping kept: Set<UInt8>) -> String {
        var text = ""
        for byte in bytes {
            if kept.contains(byte) {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                text += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return text
    }

    private static func jsonEscaped(_ secret: String, asciiOnly: Bool) -> String {
        var text = ""
        for scalar in secret.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "/": text += "\\/"
            case _ where scalar.value < 0x20 || (asciiOnly && scalar.value > 0x7E):
                for unit in String(scalar).utf16 {
                    text += "\\u" + String(unit, radix: 16, uppercase: false).leftPadded(to: 4)
                }
            default: text.unicodeScalars.append(scalar)
            }
        }
        return text
    }

    /// For each of the three offsets the secret may start at within base64's 3-byte groups, the base64
    /// characters that encode only the secret's bytes (the first and last partial groups dropped).
    private static func base64Cores(_ bytes: [UInt8]) -> [String] {
        (0..<3).compactMap { offset -> String? in
            let padded = Array(repeating: UInt8(0), count: offset) + bytes
            let encoded = Data(padded).base64EncodedString()
            // Characters wholly inside the secret: from the first group boundary after `offset` bytes to the
            // last group boundary before the end.
            let firstGroup = (offset + 2) / 3
            let lastGroup = padded.count / 3
            guard lastGroup > firstGroup else { return nil }
            let characters = Array(encoded)
            return String(characters[(firstGroup * 4)..<(lastGroup * 4)])
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
