/// One HTTP request for ``HTTPClient``.
///
/// Header values may carry secrets (an API key): the client never logs them and never puts them in an
/// error message.
public struct HTTPRequest: Sendable {
    /// The method, such as `GET`, `POST`, `PUT`, `DELETE`.
    public var method: String
    /// An absolute `http` or `https` URL.
    public var url: String
    /// Header fields in order; a name may repeat.
    public var headers: [(String, String)]
    /// The request body; empty for none.
    public var body: [UInt8]
    /// The limit for the whole exchange; nil uses the client's ``HTTPClient/Configuration/timeout``.
    public var timeout: Duration?

    public init(
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
    public static func postJSON(
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
