import Foundation

/// A `multipart/form-data` body (RFC 7578) of text fields and one file, for uploads (OpenAI's `POST /files`).
struct MultipartForm: Sendable {
    /// The boundary: random, so that no file's text holds it by chance.
    let boundary = "sluice-" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
    private(set) var body: [UInt8] = []

    var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    mutating func field(_ name: String, _ value: String) {
        append("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(Self.quoted(name))\"\r\n\r\n\(value)\r\n")
    }

    mutating func file(_ name: String, filename: String, contentType: String, data: some Sequence<UInt8>) {
        append(
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(Self.quoted(name))\"; filename=\"\(Self.quoted(filename))\"\r\nContent-Type: \(contentType)\r\n\r\n"
        )
        body.append(contentsOf: data)
        append("\r\n")
    }

    /// The closing boundary; the body is complete after it.
    mutating func finish() { append("--\(boundary)--\r\n") }

    private mutating func append(_ text: String) { body.append(contentsOf: Array(text.utf8)) }

    /// A name or file name inside a quoted header parameter: quotes, backslashes and line breaks replaced.
    static func quoted(_ text: String) -> String {
        String(text.map { "\"\\\r\n".contains($0) ? "_" : $0 })
    }
}
