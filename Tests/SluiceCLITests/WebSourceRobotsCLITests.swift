import Foundation
import SluiceCore
import SluiceTesting
import Testing

/// robots.txt as RFC 9309 asks, where session 46's campaign found it ignored: behind a redirect (read as
/// "none"), and larger than 512 KiB (every page of the site failed); each seen with the campaign's scripts
/// before the fix.
@Suite(.serialized)
struct WebSourceRobotsCLITests {
    static func site(_ ws: Workspace) async throws -> (WebSourceCLITests.Site, [String]) {
        let site = WebSourceCLITests.Site(server: try await StandInServer.launch(script: "web_server.py"))
        let base = site.server.baseURL
        try await site.put("/private/a.txt", "A private page about sluice keys.\n", type: "text/plain")
        try await site.put("/public/b.txt", "A public page about weirs.\n", type: "text/plain")
        try WebSourceCLITests.pipeline(urls: ["\(base)/private/a.txt", "\(base)/public/b.txt"])
            .write(to: ws.file("http.yaml"), atomically: true, encoding: .utf8)
        return (site, ["127.0.0.1:\(site.server.port)/public/b.txt"])
    }

    @Test("a robots.txt behind a redirect is followed and honoured")
    func redirected() async throws {
        let ws = try Workspace("web-robots-redirect")
        defer { ws.cleanUp() }
        let (site, expected) = try await Self.site(ws)
        defer { site.server.stop() }
        try await site.put("/robots-real.txt", "User-agent: *\nDisallow: /private/\n", type: "text/plain")
        try await site.redirect("/robots.txt", to: "/robots-real.txt")
        let main = ws.target("main")
        let run = try await WebSourceCLITests.run(ws, main)
        #expect(run.exitCode == 0, "\(run)")
        #expect(WebSourceCLITests.keys(try await WebSourceCLITests.content(ws, main)) == Set(expected))
    }

    @Test("a robots.txt larger than 500 KiB is read to 500 KiB, not an error for every page")
    func large() async throws {
        let ws = try Workspace("web-robots-large")
        defer { ws.cleanUp() }
        let (site, expected) = try await Self.site(ws)
        defer { site.server.stop() }
        let padding = String(repeating: "# a comment line that pads the file out\n", count: 16_000)
        try await site.robots("User-agent: *\nDisallow: /private/\n" + padding)
        let main = ws.target("main")
        let run = try await WebSourceCLITests.run(ws, main)
        #expect(run.exitCode == 0, "\(run)")
        #expect(WebSourceCLITests.keys(try await WebSourceCLITests.content(ws, main)) == Set(expected))
    }
}
