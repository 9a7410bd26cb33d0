import Foundation

/// A web document's key, from its URL alone (stable across runs, whatever the server answers): the host
/// (lowercased, with a port that is not the scheme's default), then the path as written, `index.html`
/// where it ends in `/`, then `?` and the query if there is one. The scheme and the fragment are left out:
/// `https://Example.com/docs/` is `example.com/docs/index.html`; `http://example.com:8080/a.pdf?v=2` is
/// `example.com:8080/a.pdf?v=2`.
enum WebDocumentKey {
    /// The key of `url`; nil for what is not an absolute http(s) URL with a host.
    static func key(for url: String) -> String? {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host?.lowercased(), !host.isEmpty
        else { return nil }
        var key = host
        if let port = components.port, port != (scheme == "https" ? 443 : 80) { key += ":\(port)" }
        var path = components.percentEncodedPath
        if path.isEmpty { path = "/" }
        if path.hasSuffix("/") { path += "index.html" }
        key += path
        if let query = components.percentEncodedQuery, !query.isEmpty { key += "?" + query }
        return key
    }

    /// The URL without its fragment, as requested.
    static func requestURL(_ url: String) -> String {
        guard let hash = url.firstIndex(of: "#") else { return url }
        return String(url[..<hash])
    }
}
