import CCurl
import Foundation
import SluiceCore

/// A minimal blocking HTTP(S)/file GET on one libcurl easy handle.
///
/// Each call blocks its thread until the transfer ends: call it from a thread pool the caller owns
/// (``SluiceCore/BlockingExecutor``), never from the cooperative pool. One instance serves one transfer
/// at a time; it is intentionally not `Sendable`.
public final class CurlEasy {
    /// The outcome of a transfer that got an answer.
    public struct Response: Sendable {
        /// The HTTP status code; 0 for `file://` URLs, which have none.
        public var status: Int
        /// The response body.
        public var body: [UInt8]
    }

    /// The `CURL *` easy handle; owned, released with `curl_easy_cleanup` in `deinit`.
    private let handle: UnsafeMutableRawPointer

    /// libcurl's version line, such as `libcurl/7.88.1 OpenSSL/3.0.15 zlib/1.2.13 …`.
    public static var versionString: String {
        _ = CurlGlobal.initResult
        return String(cString: curl_version())
    }

    /// Creates an easy handle.
    ///
    /// - Throws: ``SluiceError`` with code `io` if libcurl cannot be initialized.
    public init() throws {
        guard CurlGlobal.initResult == CURLE_OK else {
            throw SluiceError(.io, "curl_global_init failed: \(String(cString: curl_easy_strerror(CurlGlobal.initResult)))")
        }
        guard let handle = curl_easy_init() else {
            throw SluiceError(.io, "curl_easy_init failed")
        }
        self.handle = handle
    }

    deinit {
        curl_easy_cleanup(handle)
    }

    /// Performs a GET and returns the status code and body. A 404 or 500 is a response, not an error.
    ///
    /// - Parameters:
    ///   - url: An `http`, `https` or `file` URL.
    ///   - connectTimeout: The limit for connecting.
    ///   - timeout: The limit for the whole transfer.
    ///   - maxBodyBytes: The largest body accepted.
    /// - Returns: The ``Response``.
    /// - Throws: ``SluiceError`` with code `timeout` when a limit is hit, `tooLarge` when the body
    ///   exceeds `maxBodyBytes`, `io` for any other transfer failure (DNS, refused connection, TLS,
    ///   missing file, unsupported scheme).
    public func get(
        _ url: String,
        connectTimeout: Duration = .seconds(10),
        timeout: Duration = .seconds(60),
        maxBodyBytes: Int = 64 << 20
    ) throws -> Response {
        curl_easy_reset(handle)
        let sink = BodySink(limit: maxBodyBytes)
        let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
        defer { errorBuffer.deallocate() }

        let sinkPointer = Unmanaged.passRetained(sink).toOpaque()
        defer { Unmanaged<BodySink>.fromOpaque(sinkPointer).release() }

        try check(sluice_curl_setopt_string(handle, CURLOPT_URL, url), "CURLOPT_URL")
        try check(sluice_curl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https,file"), "CURLOPT_PROTOCOLS_STR")
        try check(sluice_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1), "CURLOPT_NOSIGNAL")
        try check(
            sluice_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, connectTimeout.milliseconds),
            "CURLOPT_CONNECTTIMEOUT_MS"
        )
        try check(sluice_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, timeout.milliseconds), "CURLOPT_TIMEOUT_MS")
        try check(sluice_curl_setopt_string(handle, CURLOPT_USERAGENT, "sluice"), "CURLOPT_USERAGENT")
        try check(sluice_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer), "CURLOPT_ERRORBUFFER")
        try check(sluice_curl_setopt_write_function(handle, curlWriteBody), "CURLOPT_WRITEFUNCTION")
        try check(sluice_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, sinkPointer), "CURLOPT_WRITEDATA")

        let code = curl_easy_perform(handle)
        guard code == CURLE_OK else {
            let detail = String(cString: errorBuffer)
            let reason = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
            switch code {
            case CURLE_OPERATION_TIMEDOUT:
                throw SluiceError(.timeout, "GET \(url): \(reason)")
            case CURLE_WRITE_ERROR where sink.overflowed:
                throw SluiceError(.tooLarge, "GET \(url): body larger than \(maxBodyBytes) bytes")
            default:
                throw SluiceError(.io, "GET \(url): \(reason) (curl error \(code.rawValue))")
            }
        }
        var status = 0
        try check(sluice_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status), "CURLINFO_RESPONSE_CODE")
        return Response(status: status, body: sink.bytes)
    }

    private func check(_ code: CURLcode, _ what: String) throws {
        guard code == CURLE_OK else {
            throw SluiceError(.io, "\(what): \(String(cString: curl_easy_strerror(code)))")
        }
    }
}

@available(*, unavailable)
extension CurlEasy: Sendable {}

/// Collects the body for the write callback; reached through `CURLOPT_WRITEDATA`.
private final class BodySink {
    let limit: Int
    var bytes: [UInt8] = []
    var overflowed = false

    init(limit: Int) { self.limit = limit }
}

/// `CURLOPT_WRITEFUNCTION`: appends a chunk to the ``BodySink``; returning less than the chunk size
/// makes libcurl stop with `CURLE_WRITE_ERROR`.
private func curlWriteBody(
    _ data: UnsafeMutablePointer<CChar>?,
    _ size: Int,
    _ count: Int,
    _ userdata: UnsafeMutableRawPointer?
) -> Int {
    let length = size * count
    guard let data, let userdata else { return 0 }
    let sink = Unmanaged<BodySink>.fromOpaque(userdata).takeUnretainedValue()
    guard sink.bytes.count + length <= sink.limit else {
        sink.overflowed = true
        return 0
    }
    sink.bytes.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length))
    return length
}

extension Duration {
    /// Whole milliseconds, at least 1 so that a tiny limit never means "no limit" to libcurl.
    fileprivate var milliseconds: Int {
        let (seconds, attoseconds) = components
        return max(1, Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000))
    }
}
