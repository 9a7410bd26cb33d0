import CCurl
import Foundation
import SluiceCore

extension SluiceError {
    /// True for failures that may go away by themselves (timeouts, network trouble): retry with backoff.
    /// Configuration mistakes (malformed URL, unsupported scheme, a certificate that does not verify)
    /// and a body over the limit are not transient.
    package var isTransient: Bool {
        code == .timeout || code == .network
    }
}

/// Maps a libcurl result to a ``SluiceError`` whose code says whether retrying may help.
///
/// The message names the method and URL and libcurl's reason; never a header (headers carry keys).
func transportError(_ code: CURLcode, detail: String, request: HTTPRequest, overflowLimit: Int?) -> SluiceError {
    let reason = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
    let what = "\(request.method) \(redactedURL(request.url))"
    switch code {
    case CURLE_OPERATION_TIMEDOUT:
        return SluiceError(.timeout, "\(what): \(reason)")
    case CURLE_WRITE_ERROR where overflowLimit != nil:
        return SluiceError(.tooLarge, "\(what): response body larger than \(overflowLimit!) bytes")
    case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_SEND_ERROR,
        CURLE_RECV_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE, CURLE_HTTP2, CURLE_HTTP2_STREAM,
        CURLE_SSL_CONNECT_ERROR, CURLE_AGAIN, CURLE_WEIRD_SERVER_REPLY:
        return SluiceError(.network, "\(what): \(reason) (curl error \(code.rawValue))")
    default:
        return SluiceError(.io, "\(what): \(reason) (curl error \(code.rawValue))")
    }
}

/// The URL without its query and user info, which may carry credentials.
package func redactedURL(_ url: String) -> String {
    var text = Substring(url)
    if let query = text.firstIndex(where: { $0 == "?" || $0 == "#" }) {
        text = text[..<query]
    }
    if let scheme = text.range(of: "://"), let at = text[scheme.upperBound...].firstIndex(of: "@"),
        !text[scheme.upperBound..<at].contains("/")
    {
        text = text[..<scheme.upperBound] + text[text.index(after: at)...]
    }
    return String(text)
}
