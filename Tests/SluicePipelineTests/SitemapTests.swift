import SluiceCore
import SluiceTesting
import Testing

@testable import SluicePipeline

@Suite struct SitemapTests {
    @Test func aURLSetAndAnIndex() throws {
        let set = try Sitemap(
            xml: Array(
                """
                <?xml version="1.0" encoding="UTF-8"?>
                <urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
                  <url><loc>https://example.com/a?x=1&amp;y=2</loc><lastmod>2026-11-28</lastmod></url>
                  <url>
                    <loc>
                      https://example.com/b.pdf
                    </loc>
                  </url>
                  <url><lastmod>2026-11-28</lastmod></url>
                </urlset>
                """.utf8
            )
        )
        #expect(set.pages == ["https://example.com/a?x=1&y=2", "https://example.com/b.pdf"])
        #expect(set.sitemaps.isEmpty)
        let index = try Sitemap(
            xml: Array(
                "<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><sitemap><loc>https://example.com/s1.xml</loc></sitemap><sitemap><loc>https://example.com/s2.xml</loc></sitemap></sitemapindex>"
                    .utf8
            )
        )
        #expect(index.sitemaps == ["https://example.com/s1.xml", "https://example.com/s2.xml"])
        #expect(index.pages.isEmpty)
    }

    /// Seen failing (session 46's campaign): a sitemap cut mid-body read as a shorter listing, and `--prune`
    /// deleted the pages past the cut.
    @Test func aSitemapCutShortIsAnErrorNotAShorterListing() {
        let whole = """
            <urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://example.com/a</loc></url>\
            <url><loc>https://example.com/b</loc></url></urlset>
            """
        for cut in [whole.count - 3, whole.count - 20, whole.count / 2] {
            #expect(throws: SluiceError.self) { try Sitemap(xml: Array(String(whole.prefix(cut)).utf8)) }
        }
        #expect(throws: SluiceError.self) {
            try Sitemap(xml: Array("<sitemapindex><sitemap><loc>https://example.com/s.xml</loc></sitemap>".utf8))
        }
    }

    @Test func aLocationInCDATAIsRead() throws {
        let set = try Sitemap(
            xml: Array(
                "<urlset><url><loc><![CDATA[https://example.com/a?x=1&y=2]]></loc></url><url><loc>https://example.com/b?x=1&amp;y=2</loc></url></urlset>"
                    .utf8
            )
        )
        #expect(set.pages == ["https://example.com/a?x=1&y=2", "https://example.com/b?x=1&y=2"])
    }

    @Test func aLargeSitemapIsReadWhole() throws {
        let count = 20_000
        let xml =
            "<urlset>" + (0..<count).map { "<url><loc>https://example.com/p\($0)</loc></url>\n" }.joined() + "</urlset>"
        let set = try Sitemap(xml: Array(xml.utf8))
        #expect(set.pages.count == count)
        #expect(set.pages.last == "https://example.com/p\(count - 1)")
    }

    @Test func whatIsNotASitemapIsAnError() {
        #expect(throws: SluiceError.self) { try Sitemap(xml: Array("<html><body>Not found</body></html>".utf8)) }
        #expect(throws: SluiceError.self) { try Sitemap(xml: []) }
    }
}

@Suite struct GzippedSitemapTests {
    static let urlset = Array(
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
          <url><loc>https://example.com/a</loc></url>
          <url><loc>https://example.com/b</loc></url>
        </urlset>
        """.utf8
    )

    @Test func aGzippedSitemapIsReadAsItsXML() throws {
        let sitemap = try Sitemap(body: GzipWriter.gzip(Self.urlset), maxBytes: 1 << 20)
        #expect(sitemap.pages == ["https://example.com/a", "https://example.com/b"])
        // Plain XML is read as before.
        #expect(try Sitemap(body: Self.urlset, maxBytes: 1 << 20) == sitemap)
    }

    @Test func aGzippedSitemapPastTheLimitOrDamagedIsAnError() throws {
        let tooLarge = try #require(throws: SluiceError.self) {
            try Sitemap(body: GzipWriter.gzip(Self.urlset), maxBytes: Self.urlset.count - 1)
        }
        #expect(tooLarge.code == .tooLarge)
        #expect(tooLarge.message.contains("gzipped sitemap"), "\(tooLarge)")
        let cut = try #require(throws: SluiceError.self) {
            try Sitemap(body: Array(GzipWriter.gzip(Self.urlset).dropLast(6)), maxBytes: 1 << 20)
        }
        #expect(cut.code == .malformed)
    }
}
