import Foundation
import SluiceCore
import SluiceTesting
import Testing

/// `sluice check` on `source.kind: http` (issue 34) really asks the site: one GET per site (robots.txt
/// first), the count of URLs the include patterns match, exit 6 when the site cannot be reached and exit 1
/// when it refuses (401, 403); nothing written to the state.
@Suite(.serialized)
struct WebSourceCheckCLITests {
    static func check(_ ws: Workspace, _ target: Workspace.Target) async throws -> CommandResult {
        try await ws.sluice(["check", ws.file("http.yaml").path] + target.arguments, timeout: .seconds(120))
    }

    @Test(
        "check asks each site once, counts the URLs include matches, and exits 6 for a site that is down, 1 for a refusal"
    )
    func checkAsksTheSite() async throws {
        let ws = try Workspace("web-check")
        defer { ws.cleanUp() }
        let site = WebSourceCLITests.Site(server: try await StandInServer.launch(script: "web_server.py"))
        defer { site.server.stop() }
        let base = site.server.baseURL
        try await site.put("/a.txt", "A page about weirs.\n", type: "text/plain")
        try await site.put("/b.txt", "A page about locks.\n", type: "text/plain")
        try await site.put("/sitemap.xml", site.sitemap(["/c.txt", "/d.bin"]), type: "application/xml")
        try await site.put("/c.txt", "A page about dams.\n", type: "text/plain")
        let pipeline = WebSourceCLITests.pipeline(urls: ["\(base)/a.txt", "\(base)/b.txt"])
            .replacingOccurrences(
                of: "    max_retries: 1\n",
                with: "    max_retries: 1\n    sitemaps: [\"\(base)/sitemap.xml\"]\n"
            )
            .replacingOccurrences(of: "  include: [\"**\"]\n", with: "  include: [\"**/*.txt\"]\n")
        try pipeline.write(to: ws.file("http.yaml"), atomically: true, encoding: .utf8)
        let main = ws.target("main")

        // 1. The site answers: the sitemap, then one page asked; three URLs of four match.
        let ok = try await Self.check(ws, main)
        #expect(ok.exitCode == 0, "\(ok)")
        #expect(ok.stdout.contains(": 3 URLs match include/exclude (4 listed)"), "\(ok.stdout)")
        #expect(ok.stdout.contains("127.0.0.1:\(site.server.port) answers (HTTP 200)"), "\(ok.stdout)")
        let stats = try await site.stats()
        #expect(stats.paths == ["/sitemap.xml", "/a.txt"], "one page asked for the site: \(stats.paths)")
        #expect(!FileManager.default.fileExists(atPath: main.state.appendingPathComponent("fetch").path))

        // 2. The site refuses the user agent: a setting to fix (exit 1).
        try await site.fail("/a.txt", status: 403)
        let refused = try await Self.check(ws, main)
        #expect(refused.exitCode == 1, "\(refused)")
        #expect(refused.stdout.contains("refuses: HTTP 403"), "\(refused.stdout)")
        try await site.fail("/a.txt", status: 0)

        // 3. A URL list on a host that is down (no sitemap: only the page's request can tell): exit 6.
        try WebSourceCLITests.pipeline(urls: ["http://127.0.0.1:9/a.txt"])
            .write(to: ws.file("http.yaml"), atomically: true, encoding: .utf8)
        let down = try await Self.check(ws, main)
        #expect(down.exitCode == 6, "\(down)")
        #expect(down.stdout.contains("cannot be reached"), "\(down.stdout)")
    }
}
