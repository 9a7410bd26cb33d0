import Foundation

/// A crawl's URLs in one normal form, so that one page is one key whatever way a link writes it: resolved
/// against the page (or its `<base href>`), dot segments removed, scheme and host lowercased, the scheme's
/// default port and the fragment dropped, an empty path made `/`. The query is kept as written (it may
/// name another page).
enum CrawlLink {
    /// `href` resolved against `base` and normalised; nil when it is not an http(s) URL with a host
    /// (`mailto:`, `javascript:`, text that is not a URL).
    static func normalised(_ href: String, against base: URL?) -> String? {
        guard let resolved = URL(string: href, relativeTo: base)?.absoluteURL.standardized,
            var components = URLComponents(url: resolved, resolvingAgainstBaseURL: false),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = components.host?.lowercased(), !host.isEmpty
        else { return nil }
        components.scheme = scheme
        components.host = host
        if components.port == (scheme == "https" ? 443 : 80) { components.port = nil }
        components.fragment = nil
        components.user = nil
        components.password = nil
        if components.percentEncodedPath.isEmpty { components.percentEncodedPath = "/" }
        if components.percentEncodedQuery?.isEmpty == true { components.percentEncodedQuery = nil }
        return components.string
    }

    /// The site of a normalised URL: `scheme://host[:port]` (a port only when not the scheme's default).
    static func site(of url: String) -> String? {
        guard let components = URLComponents(string: url), let scheme = components.scheme,
            let host = components.host
        else { return nil }
        return "\(scheme)://\(host)" + (components.port.map { ":\($0)" } ?? "")
    }
}
