import Foundation

extension PipelineConfiguration.Source {
    /// `source.http`: web pages and files named by URL, directly (`urls`), by sitemaps (`sitemaps`, a
    /// sitemap index included) or found by a same-site crawl from `start_urls`, read with conditional GETs (the change token is the page's `ETag`, else its
    /// `Last-Modified`), robots.txt honoured, one host asked at most once per `delay_seconds`, `concurrency` requests in flight across hosts.
    public struct HTTP: Sendable, Hashable {
        /// Pages and files to read (`http://` or `https://` URLs).
        public var urls: [String] = []
        /// Sitemaps (`<urlset>`) or sitemap indexes (`<sitemapindex>`) whose URLs are read; one that cannot
        /// be fetched or read fails the listing (the run stops, nothing is pruned).
        public var sitemaps: [String] = []
        /// Start URLs of a same-site crawl: each page fetched is read for its links (`<a href>`, `<area
        /// href>`), and those on the start URL's own site (scheme, host and port) are read in turn, within
        /// ``maxDepth`` and ``maxPages``.
        public var startURLs: [String] = []
        /// How many links away from a start URL the crawl goes (`0`: the start URLs alone).
        public var maxDepth: Int = 3
        /// The most pages one crawl asks (start URLs included); pages past it are not asked this run (and
        /// never deleted for it).
        public var maxPages: Int = 1_000
        /// Requests in flight at once, across hosts; one host is still asked one request at a time, at
        /// least ``delaySeconds`` apart.
        public var concurrency: Int = 4
        /// The least time between two requests to one host (the politeness delay); a robots.txt
        /// `Crawl-delay` that asks for more is followed, up to 60 seconds.
        public var delaySeconds: Double = 1
        /// Redirects followed for one URL (301, 302, 303, 307, 308) before it fails.
        public var maxRedirects: Int = 5
        /// Retries of a request after its first attempt on a transient failure (a connection error, a
        /// timeout, a 5xx, a 429); `0` tries once.
        public var maxRetries: Int = 2
        /// Limit for one request.
        public var timeoutSeconds: Double = 60
        /// The `User-Agent` sent, whose first word is the name robots.txt groups are matched against.
        public var userAgent: String = "sluice"
        /// Honour robots.txt: a URL it disallows for `user_agent` is not fetched (the document fails, saying so).
        public var robotsTxt: Bool = true
        public init() {}
    }
}

extension PipelineConfiguration.Source.HTTP {
    init(section: ConfigurationSection) throws {
        self.init()
        var s = section
        urls = try s.strings("urls") ?? urls
        sitemaps = try s.strings("sitemaps") ?? sitemaps
        startURLs = try s.strings("start_urls") ?? startURLs
        maxDepth = try s.int("max_depth", min: 0, max: 100) ?? maxDepth
        maxPages = try s.int("max_pages", min: 1, max: 10_000_000) ?? maxPages
        concurrency = try s.int("concurrency", min: 1, max: 64) ?? concurrency
        delaySeconds = try s.number("delay_seconds", min: 0, max: 3_600) ?? delaySeconds
        maxRedirects = try s.int("max_redirects", min: 0, max: 20) ?? maxRedirects
        maxRetries = try s.int("max_retries", min: 0, max: 100) ?? maxRetries
        timeoutSeconds = try s.number("timeout_seconds", min: 0.001, max: 86_400) ?? timeoutSeconds
        userAgent = try s.string("user_agent") ?? userAgent
        robotsTxt = try s.bool("robots_txt") ?? robotsTxt
        for url in urls + sitemaps + startURLs {
            // A user name or password in a URL is a credential: it would be sent (as Basic authorization)
            // and written into logs, reasons and the state. Refused, without repeating the URL.
            if let parts = URLComponents(string: url), parts.user != nil || parts.password != nil {
                throw SluiceError(
                    .configuration,
                    "source.http: a URL with a user name or password (\(parts.host ?? "?")): Sluice sends no credentials to web sites"
                )
            }
            guard url.hasPrefix("http://") || url.hasPrefix("https://") else {
                throw SluiceError(.configuration, "source.http: \(url) is not an http:// or https:// URL")
            }
        }
        if userAgent.trimmingCharacters(in: .whitespaces).isEmpty {
            throw SluiceError(.configuration, "source.http.user_agent must not be empty")
        }
        try s.finish()
    }
}
