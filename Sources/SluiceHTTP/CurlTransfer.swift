import CCurl
import SluiceCore
import Synchronization

/// One request in flight on the ``CurlMultiLoop``: its easy handle and what the callbacks collect.
///
/// Created on the caller's task; from then on only the loop thread touches the easy handle and the
/// collected response. The one field other threads touch, ``cancelled``, is atomic.
final class CurlTransfer: @unchecked Sendable {
    let request: HTTPRequest
    let delivery: TransferDelivery
    let limit: Int
    /// Set by a cancelled task; the loop drops the transfer when it sees it.
    let cancelled = Atomic<Bool>(false)

    // Loop thread only.
    var easy: UnsafeMutableRawPointer?
    var headerList: UnsafeMutablePointer<curl_slist>?
    var body: [UInt8] = []
    /// Body bytes received so far (streamed bytes are handed on, not kept in ``body``).
    var received = 0
    var headers: [String: String] = [:]
    var overflowed = false
    let errorBuffer: UnsafeMutablePointer<CChar>

    init(request: HTTPRequest, limit: Int, delivery: TransferDelivery) {
        self.request = request
        self.limit = limit
        self.delivery = delivery
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    deinit {
        if let easy { curl_easy_cleanup(easy) }
        if let headerList { curl_slist_free_all(headerList) }
        errorBuffer.deallocate()
    }

    /// The receive buffer of each transfer (`CURLOPT_BUFFERSIZE`): 100 KiB, as the `curl` tool sets it,
    /// instead of libcurl's default 16 KiB.
    ///
    /// With Debian 12's libcurl 7.88.1, HTTP/2 DATA for a stream is copied into that transfer's buffer;
    /// when a 16 KiB frame fills it, the rest is held back with `NGHTTP2_ERR_PAUSE`, which pauses the
    /// whole connection (`pause_stream_id` in lib/http2.c). With 20 streams on one connection, about one
    /// run in five left a stream one frame short of its end (98,304 of 100,000 bytes, 999,424 of
    /// 1,000,000) until the timeout. With 100 KiB: no stall in 100 runs (bodies of 100 KB and 1 MB);
    /// see docs/EMBEDDERS.md, "Remote embedders". Costs 84 KiB more memory per transfer in flight.
    static let receiveBufferSize = 100 * 1024

    /// Creates and configures the easy handle. Runs on the loop thread.
    func prepare(_ configuration: HTTPClient.Configuration) throws {
        guard let easy = curl_easy_init() else { throw SluiceError(.io, "curl_easy_init failed") }
        self.easy = easy
        let timeout = request.timeout ?? configuration.timeout
        try set(CURLOPT_URL, string: request.url)
        if request.pathAsIs { try set(CURLOPT_PATH_AS_IS, 1) }
        try set(CURLOPT_PROTOCOLS_STR, string: "http,https")
        try set(CURLOPT_NOSIGNAL, 1)
        try set(CURLOPT_CONNECTTIMEOUT_MS, configuration.connectTimeout.curlMilliseconds)
        try set(CURLOPT_TIMEOUT_MS, timeout.curlMilliseconds)
        try set(CURLOPT_USERAGENT, string: configuration.userAgent)
        // Any encoding libcurl can decode (gzip, deflate, br, zstd here); the body arrives decoded.
        try set(CURLOPT_ACCEPT_ENCODING, string: "")
        // HTTP/2 over TLS when the server offers it (ALPN), HTTP/1.1 otherwise.
        try set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
        try set(CURLOPT_SSL_VERIFYPEER, 1)
        try set(CURLOPT_SSL_VERIFYHOST, 2)
        if let ca = configuration.caBundlePath { try set(CURLOPT_CAINFO, string: ca) }
        if let signing = request.awsSigning {
            try set(CURLOPT_AWS_SIGV4, string: signing.provider)
            try set(CURLOPT_USERPWD, string: signing.userPassword)
        }
        // Waiting for a connection to multiplex on beats opening a second one, where one can be (HTTP/2 comes
        // over TLS only, `CURL_HTTP_VERSION_2TLS`). Over plain HTTP every request to a host would otherwise
        // wait for the answer's first bytes on the connection in use before opening another: downloads that
        // should run side by side ran one after another (S3SourceDownloadBoundsCLITests).
        if request.url.lowercased().hasPrefix("https:") { try set(CURLOPT_PIPEWAIT, 1) }
        try set(CURLOPT_TCP_KEEPALIVE, 1)
        // libcurl 7.88's HTTP/2 receive path stalls a multiplexed stream when its receive buffer is the
        // default 16 KiB (one full DATA frame): see ``receiveBufferSize``.
        try set(CURLOPT_BUFFERSIZE, Self.receiveBufferSize)
        try check(sluice_curl_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer), "CURLOPT_ERRORBUFFER")

        let me = Unmanaged.passUnretained(self).toOpaque()
        try check(sluice_curl_setopt_write_function(easy, transferWriteBody), "CURLOPT_WRITEFUNCTION")
        try check(sluice_curl_setopt_pointer(easy, CURLOPT_WRITEDATA, me), "CURLOPT_WRITEDATA")
        try check(sluice_curl_setopt_header_function(easy, transferWriteHeader), "CURLOPT_HEADERFUNCTION")
        try check(sluice_curl_setopt_pointer(easy, CURLOPT_HEADERDATA, me), "CURLOPT_HEADERDATA")

        // "Expect:" switches off `Expect: 100-continue`, which costs a round trip (or a 1 s wait).
        var list: UnsafeMutablePointer<curl_slist>? = curl_slist_append(nil, "Expect:")
        for (name, value) in request.headers {
            list = curl_slist_append(list, "\(name): \(value)")
        }
        headerList = list
        try check(sluice_curl_setopt_slist(easy, CURLOPT_HTTPHEADER, list), "CURLOPT_HTTPHEADER")

        let method = request.method.uppercased()
        switch method {
        case "GET" where request.body.isEmpty:
            try set(CURLOPT_HTTPGET, 1)
        case "HEAD":
            try set(CURLOPT_NOBODY, 1)
        default:
            if !request.body.isEmpty || method == "POST" {
                try check(
                    sluice_curl_setopt_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count)),
                    "CURLOPT_POSTFIELDSIZE_LARGE"
                )
                // COPYPOSTFIELDS copies the bytes: the request value may go away before the upload ends.
                try request.body.withUnsafeBytes { bytes in
                    var empty: UInt8 = 0
                    let pointer = bytes.baseAddress.map { UnsafeMutableRawPointer(mutating: $0) }
                    try withUnsafeMutablePointer(to: &empty) { fallback in
                        try check(
                            sluice_curl_setopt_pointer(
                                easy,
                                CURLOPT_COPYPOSTFIELDS,
                                pointer ?? UnsafeMutableRawPointer(fallback)
                            ),
                            "CURLOPT_COPYPOSTFIELDS"
                        )
                    }
                }
            }
            if method != "POST" { try set(CURLOPT_CUSTOMREQUEST, string: method) }
        }
    }

    /// The response once the transfer finished with `CURLE_OK`.
    func response() -> HTTPResponse {
        var status = 0
        var version = 0
        var connects = 0
        if let easy {
            _ = sluice_curl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
            _ = sluice_curl_getinfo_long(easy, CURLINFO_HTTP_VERSION, &version)
            _ = sluice_curl_getinfo_long(easy, CURLINFO_NUM_CONNECTS, &connects)
        }
        let versionText: String
        switch version {
        case Int(CURL_HTTP_VERSION_1_0): versionText = "1.0"
        case Int(CURL_HTTP_VERSION_2_0): versionText = "2"
        case Int(CURL_HTTP_VERSION_3): versionText = "3"
        default: versionText = "1.1"
        }
        return HTTPResponse(
            status: status,
            headers: headers,
            body: body,
            httpVersion: versionText,
            connectionsOpened: connects
        )
    }

    /// The error for a transfer that ended with `code`.
    func failure(_ code: CURLcode) -> SluiceError {
        transportError(
            code,
            detail: String(cString: errorBuffer),
            request: request,
            overflowLimit: overflowed ? limit : nil
        )
    }

    /// Parses one header line; a status line starts a new header block (after `100 Continue` or a
    /// redirect only the final block counts).
    func receiveHeaderLine(_ line: String) {
        if line == "\r\n" || line == "\n" {
            // The end of a header block: the final one (not a 1xx) is the head a streaming reader waits for.
            var status = 0
            if let easy { _ = sluice_curl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status) }
            if status >= 200 { delivery.deliverHead(status: status, headers: headers) }
            return
        }
        if line.hasPrefix("HTTP/") {
            headers.removeAll()
            return
        }
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = line[..<colon].trimmingSpaces().lowercased()
        let value = line[line.index(after: colon)...].trimmingSpaces()
        guard !name.isEmpty else { return }
        if let existing = headers[name] {
            headers[name] = existing + ", " + value
        } else {
            headers[name] = value
        }
    }

    private func set(_ option: CURLoption, _ value: Int) throws {
        try check(sluice_curl_setopt_long(easy, option, value), "\(option)")
    }

    private func set(_ option: CURLoption, string value: String) throws {
        try check(sluice_curl_setopt_string(easy, option, value), "\(option)")
    }

    private func check(_ code: CURLcode, _ what: String) throws {
        guard code == CURLE_OK else {
            throw SluiceError(.io, "\(what): \(String(cString: curl_easy_strerror(code)))")
        }
    }
}

/// `CURLOPT_WRITEFUNCTION`: appends body bytes; returning less than offered stops the transfer.
private func transferWriteBody(
    _ data: UnsafeMutablePointer<CChar>?,
    _ size: Int,
    _ count: Int,
    _ userdata: UnsafeMutableRawPointer?
) -> Int {
    withTransfer(data, size * count, userdata) { transfer, bytes in
        guard transfer.received + bytes.count <= transfer.limit else {
            transfer.overflowed = true
            return 0
        }
        transfer.received += bytes.count
        if transfer.delivery.isStreamed {
            transfer.delivery.deliverBody(Array(bytes))
        } else {
            transfer.body.append(contentsOf: bytes)
        }
        return bytes.count
    }
}

/// `CURLOPT_HEADERFUNCTION`: one complete header line per call.
private func transferWriteHeader(
    _ data: UnsafeMutablePointer<CChar>?,
    _ size: Int,
    _ count: Int,
    _ userdata: UnsafeMutableRawPointer?
) -> Int {
    withTransfer(data, size * count, userdata) { transfer, bytes in
        transfer.receiveHeaderLine(String(decoding: bytes, as: UTF8.self))
        return bytes.count
    }
}

/// The ``CurlTransfer`` behind a callback's user pointer (unretained: the loop holds it) and the bytes.
private func withTransfer(
    _ data: UnsafeMutablePointer<CChar>?,
    _ length: Int,
    _ userdata: UnsafeMutableRawPointer?,
    _ body: (CurlTransfer, UnsafeRawBufferPointer) -> Int
) -> Int {
    guard let data, let userdata else { return 0 }
    return body(
        Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue(),
        UnsafeRawBufferPointer(start: data, count: length)
    )
}

extension StringProtocol {
    fileprivate func trimmingSpaces() -> String {
        // Character.isWhitespace: "\r\n" is one Character, so comparing with "\r" would miss it.
        let isSpace: (Character) -> Bool = { $0.isWhitespace }
        guard let first = firstIndex(where: { !isSpace($0) }) else { return "" }
        let last = lastIndex(where: { !isSpace($0) })!
        return String(self[first...last])
    }
}

extension Duration {
    /// Whole milliseconds, at least 1 so that a tiny limit never means "no limit" to libcurl.
    var curlMilliseconds: Int {
        let (seconds, attoseconds) = components
        return max(1, Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000))
    }
}
