import Foundation
import Testing

@testable import SluicePipeline

/// One page, one URL: the crawl's normal form of links, and the site a link belongs to.
@Suite struct CrawlLinkTests {
    static let page = URL(string: "http://127.0.0.1:8080/docs/a/page.html")

    @Test(arguments: [
        ("../b.html#part", "http://127.0.0.1:8080/docs/b.html"),
        ("/c?q=1#frag", "http://127.0.0.1:8080/c?q=1"),
        ("HTTP://Example.COM:80/x/./y/../z", "http://example.com/x/z"),
        ("https://example.com:443", "https://example.com/"),
        ("//other.org/p", "http://other.org/p"),
        ("?q=2", "http://127.0.0.1:8080/docs/a/page.html?q=2"),
        ("#top", "http://127.0.0.1:8080/docs/a/page.html"),
        ("d e.html", "http://127.0.0.1:8080/docs/a/d%20e.html"),
    ])
    func linksAreResolvedAndNormalised(href: String, expected: String) {
        #expect(CrawlLink.normalised(href, against: Self.page) == expected)
    }

    @Test(arguments: ["mailto:a@example.com", "javascript:void(0)", "ftp://example.com/f", "", "tel:+1"])
    func whatIsNotAWebPageIsNoLink(href: String) {
        #expect(CrawlLink.normalised(href, against: Self.page) == nil)
    }

    @Test func aSiteIsSchemeHostAndPort() {
        #expect(CrawlLink.site(of: "http://127.0.0.1:8080/a") == "http://127.0.0.1:8080")
        #expect(CrawlLink.site(of: "http://127.0.0.1:8081/a") != CrawlLink.site(of: "http://127.0.0.1:8080/a"))
        #expect(CrawlLink.site(of: "https://example.com/a") != CrawlLink.site(of: "http://example.com/a"))
    }
}
