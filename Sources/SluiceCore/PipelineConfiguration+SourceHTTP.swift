import Foundation

extension PipelineConfiguration.Source {
    /// `source.http`: web pages and files named by URL, directly (`urls`) or by sitemaps (`sitemaps`, a
    /// sitemap index included), read with conditional GETs (the change token is the page's `ETag`, else its
    /// `Last-Modified`), robots.txt honoured, one host asked at most once per `delay_seconds`.
    public struct HTTP: Sendable, Hashable {
        /// Pages and files to read (`http://` or `https://` URLs).
        public var urls: [String] = []
        /// Sitemaps (`<urlset>`) or sitemap indexes (`<sitemapindex>`) whose URLs are read; one that cannot
        /// be fetched or read fails the listing (the run stops, nothing is pruned).
        public var sitemaps: [String] = []
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
        delaySeconds = try s.number("delay_seconds", min: 0, max: 3_600) ?? delaySeconds
        maxRedirects = try s.int("max_redirects", min: 0, max: 20) ?? maxRedirects
        maxRetries = try s.int("max_retries", min: 0, max: 100) ?? maxRetries
        timeoutSeconds = try s.number("timeout_seconds", min: 0.001, max: 86_400) ?? timeoutSeconds
        userAgent = try s.string("user_agent") ?? userAgent
        robotsTxt = try s.bool("robots_txt") ?? robotsTxt
        for url in urls + sitemaps where !(url.hasPrefix("http://") || url.hasPrefix("https://")) {
            throw SluiceError(.configuration, "source.http: \(url) is not an http:// or https:// URL")
        }
        if userAgent.trimmingCharacters(in: .whitespaces).isEmpty {
            throw SluiceError(.configuration, "source.http.user_agent must not be empty")
        }
        try s.finish()
    }
}
