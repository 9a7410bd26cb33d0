import SluiceExtract
import Testing

/// The links a crawl reads from a page, parsed by libxml2 (broken markup included), not matched by patterns.
@Suite struct HTMLLinksTests {
    @Test func anchorsAndAreasInDocumentOrderWithoutRepeats() throws {
        let html = """
            <html><head><title>t</title><base href="/root/"></head><body>
            <p>See <a href="one.html">one</a> and <A HREF='two.html#x'>two</A>.
            <!-- <a href="commented.html">not a link</a> -->
            <script>var s = '<a href="scripted.html">';</script>
            <map><area href="three.html" alt="3"></map>
            <a href="one.html">again</a>
            <a name="anchor-only">no href</a>
            <a href="  four.html  ">spaced</a>
            <div><p><a href="five.html">unclosed <b>tags
            </body></html>
            """
        let links = try HTMLLinks(html: Array(html.utf8))
        #expect(links.hrefs == ["one.html", "two.html#x", "three.html", "four.html", "five.html"])
        #expect(links.base == "/root/")
    }

    @Test func aLinkIsReadInTheCharsetTheTransportDeclared() throws {
        // <a href="шлюз.html"> in windows-1251, served as `text/html; charset=windows-1251`, without a <meta>.
        let page = Array("<body><a href=\"".utf8) + [0xF8, 0xEB, 0xFE, 0xE7] + Array(".html\">a</a></body>".utf8)
        #expect(try HTMLLinks(html: page, declaredCharset: "windows-1251").hrefs == ["шлюз.html"])
        #expect(try HTMLLinks(html: page).hrefs != ["шлюз.html"], "undeclared, the bytes read as windows-1252")
    }

    @Test func noFollowIsHonoured() throws {
        let some = try HTMLLinks(
            html: Array(#"<body><a href="a.html" rel="nofollow noopener">a</a><a href="b.html">b</a></body>"#.utf8)
        )
        #expect(some.hrefs == ["b.html"])
        let none = try HTMLLinks(
            html: Array(
                #"<head><meta name="robots" content="noindex, nofollow"></head><body><a href="b.html">b</a></body>"#
                    .utf8
            )
        )
        #expect(none.hrefs.isEmpty)
    }

    @Test func entitiesInHrefsAreDecoded() throws {
        let links = try HTMLLinks(html: Array(#"<a href="page?a=1&amp;b=2">x</a>"#.utf8))
        #expect(links.hrefs == ["page?a=1&b=2"])
    }
}
