/// One HTTP request for ``HTTPClient``.
///
/// Header values may carry secrets (an API key): the client never logs them and never puts them in an
/// error message.
package struct HTTPRequest: Sendable {
    /// The method, such as `GET`, `POST`, `PUT`, `DELETE`.
    package var method: String
    /// An absolute `http` or `https` URL.
    package var url: String
    /// Header fields in order; a name may repeat.
    package var headers: [(String, String)]
    /// The request body; empty for none.
    package var body: [UInt8]
    /// The limit for the whole exchange; nil uses the client's ``HTTPClient/Configuration/timeout``.
    package var timeout: Duration?
    /// The largest response body accepted (a larger one fails with `too-large`, the transfer stopped
    /// there); nil uses the client's ``HTTPClient/Configuration/maxResponseBytes``. A streamed answer that
    /// must stay small (a chat model's) sets its own.
    package var maxResponseBytes: Int?
    /// Sign the request with AWS Signature Version 4 (libcurl's `CURLOPT_AWS_SIGV4`); nil: unsigned.
    package var awsSigning: AWSSigning?
    /// Send the URL's path as it is written: `.` and `..` segments are not removed (`CURLOPT_PATH_AS_IS`).
    /// An S3 object key is a name, not a path: `docs/sub/../a.txt` is its own object, which a normalized
    /// path would replace with `docs/a.txt`.
    package var pathAsIs = false

    package init(
        method: String = "GET",
        url: String,
        headers: [(String, String)] = [],
        body: [UInt8] = [],
        timeout: Duration? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }

    /// A POST of a JSON body with `content-type: application/json`.
    package static func postJSON(
        _ url: String,
        body: [UInt8],
        headers: [(String, String)] = [],
        timeout: Duration? = nil
    ) -> HTTPRequest {
        HTTPRequest(
            method: "POST",
            url: url,
            headers: [("Content-Type", "application/json")] + headers,
            body: body,
            timeout: timeout
        )
    }
}
