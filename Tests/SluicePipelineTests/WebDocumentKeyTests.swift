import Testing

@testable import SluicePipeline

@Suite struct WebDocumentKeyTests {
    @Test(arguments: [
        ("https://Example.com/docs/", "example.com/docs/index.html"),
        ("https://example.com", "example.com/index.html"),
        ("http://example.com:8080/a.pdf?v=2#page=3", "example.com:8080/a.pdf?v=2"),
        ("https://example.com:443/a%20b.html", "example.com/a%20b.html"),
        ("http://example.com:80/intro", "example.com/intro"),
    ])
    func keys(url: String, key: String) {
        #expect(WebDocumentKey.key(for: url) == key)
    }

    @Test func whatIsNotAWebURLHasNoKey() {
        #expect(WebDocumentKey.key(for: "ftp://example.com/a") == nil)
        #expect(WebDocumentKey.key(for: "/relative/path") == nil)
        #expect(WebDocumentKey.requestURL("https://example.com/a#b") == "https://example.com/a")
    }

    @Test func theContentTypeNamesTheDownload() {
        #expect(
            WebContentType.fileName(key: "example.com/docs/intro", contentType: "text/html; charset=utf-8")
                == "intro.html"
        )
        #expect(
            WebContentType.fileName(key: "example.com/report.php?id=3", contentType: "application/pdf") == "report.pdf"
        )
        #expect(WebContentType.fileName(key: "example.com/a.tar", contentType: "application/x-tar") == "a.tar")
        #expect(WebContentType.fileName(key: "example.com/index.html", contentType: nil) == "index.html")
    }
}
