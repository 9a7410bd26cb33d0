import Foundation
import SluiceCore
import SluiceTesting
import Testing

/// URLs the web source meets in sitemaps and redirects, where session 46's campaign found them mishandled
/// (each seen before the fix): a relative `<loc>` dropped without a word, and a redirect to a URL with a
/// user name and password followed, its password sent and written into the failure's reason.
@Suite(.serialized)
struct WebSourceURLsCLITests {
    static func pipeline(sitemap: String, urls: [String] = []) -> String {
        WebSourceCLITests.pipeline(urls: urls).replacingOccurrences(
            of: "    delay_seconds: 0\n",
            with: "    sitemaps: [\"\(sitemap)\"]\n    delay_seconds: 0\n"
        )
    }

    @Test("a relative <loc> is read against its sitemap's URL; a <loc> that is not http(s) is named in a notice")
    func relativeLocations() async throws {
        let ws = try Workspace("web-relative-loc")
        defer { ws.cleanUp() }
        let site = WebSourceCLITests.Site(server: try await StandInServer.launch(script: "web_server.py"))
        defer { site.server.stop() }
        let base = site.server.baseURL
        let host = "127.0.0.1:\(site.server.port)"
        try await site.put("/docs/a.txt", "A page listed by an absolute path.\n", type: "text/plain")
        try await site.put("/docs/b.txt", "A page listed relative to the sitemap.\n", type: "text/plain")
        try await site.put("/docs/c.txt", "A page listed in full.\n", type: "text/plain")
        try await site.put(
            "/docs/sitemap.xml",
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
              <url><loc>/docs/a.txt</loc></url>
              <url><loc>b.txt</loc></url>
              <url><loc>\(base)/docs/c.txt</loc></url>
              <url><loc>ftp://files.example/d.txt</loc></url>
            </urlset>
            """,
            type: "application/xml"
        )
        try Self.pipeline(sitemap: "\(base)/docs/sitemap.xml")
            .write(to: ws.file("http.yaml"), atomically: true, encoding: .utf8)
        let main = ws.target("main")
        let run = try await WebSourceCLITests.run(ws, main)
        #expect(run.exitCode == 0, "\(run)")
        #expect(
            WebSourceCLITests.keys(try await WebSourceCLITests.content(ws, main))
                == ["\(host)/docs/a.txt", "\(host)/docs/b.txt", "\(host)/docs/c.txt"]
        )
        #expect(run.stderr.contains("1 sitemap URL was passed over"), "\(run.stderr)")
        #expect(run.stderr.contains("ftp://files.example/d.txt: it is not an http(s) URL"), "\(run.stderr)")
    }

    @Test(
        "a redirect to a URL with a user name and password fails its document, without following it or naming the password"
    )
    func redirectWithCredentials() async throws {
        let ws = try Workspace("web-redirect-userinfo")
        defer { ws.cleanUp() }
        let site = WebSourceCLITests.Site(server: try await StandInServer.launch(script: "web_server.py"))
        defer { site.server.stop() }
        let base = site.server.baseURL
        let host = "127.0.0.1:\(site.server.port)"
        try await site.put("/kept.txt", "A page that stays where it is.\n", type: "text/plain")
        try await site.put("/target.txt", "The page behind the redirect.\n", type: "text/plain")
        try await site.redirect("/moved.txt", to: "http://reader:hunter2-pw@\(host)/target.txt")
        try WebSourceCLITests.pipeline(urls: ["\(base)/kept.txt", "\(base)/moved.txt"])
            .write(to: ws.file("http.yaml"), atomically: true, encoding: .utf8)
        let main = ws.target("main")
        let before = try await site.stats()
        let run = try await WebSourceCLITests.run(ws, main)
        #expect(run.exitCode == 2, "\(run)")
        #expect(run.stderr.contains("redirected to a URL with a user name or password"), "\(run.stderr)")
        #expect(!run.stderr.contains("hunter2") && !run.stdout.contains("hunter2"), "\(run)")
        let paths = try await site.stats().paths.dropFirst(before.paths.count)
        #expect(!paths.contains("/target.txt"), "the redirect was not followed: \(paths)")
        #expect(WebSourceCLITests.keys(try await WebSourceCLITests.content(ws, main)) == ["\(host)/kept.txt"])
        let status = try await ws.sluice(["status", ws.file("http.yaml").path] + main.arguments + ["--json"])
        #expect(status.exitCode == 0 && !status.stdout.contains("hunter2"), "\(status)")
        #expect(status.stdout.contains("redirected to a URL with a user name or password"), "\(status)")
    }
}
