/// The answer to an ``HTTPRequest``: any status, 4xx and 5xx included.
package struct HTTPResponse: Sendable {
    /// The HTTP status code.
    package var status: Int
    /// Header fields of the final response, names lower-cased; repeated fields joined with `, `.
    package var headers: [String: String]
    /// The body, decompressed when the server compressed it.
    package var body: [UInt8]
    /// The HTTP version that carried the answer: `1.1`, `2`, …
    package var httpVersion: String
    /// How many connections the exchange opened: 0 when it reused a kept-alive connection or shared an
    /// HTTP/2 one with other requests (libcurl's `CURLINFO_NUM_CONNECTS`).
    package var connectionsOpened: Int

    package init(
        status: Int,
        headers: [String: String] = [:],
        body: [UInt8] = [],
        httpVersion: String = "1.1",
        connectionsOpened: Int = 0
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.httpVersion = httpVersion
        self.connectionsOpened = connectionsOpened
    }

    /// The value of a header field, looked up case-insensitively.
    package func header(_ name: String) -> String? {
        headers[name.lowercased()]
    }

    /// The body as UTF-8 text (invalid bytes repaired), for messages.
    package var bodyText: String {
        String(decoding: body, as: UTF8.self)
    }

    /// True for 2xx.
    package var isSuccess: Bool { (200..<300).contains(status) }
}
