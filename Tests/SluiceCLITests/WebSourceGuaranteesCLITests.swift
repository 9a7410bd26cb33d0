import Foundation
import SluiceCore
import SluiceTesting
import Testing

/// The folder source's guarantees that the other web source suites do not show, on `source.kind: http`
/// against `web_server.py` on loopback (issue 34): a page that failed for good (served empty) is a known
/// failure on the next run, answered 304 and not downloaded again; a sitemap that comes back empty deletes
/// nothing with `--prune` unless `--allow-mass-delete` (the mass-delete guard, exit 7).
@Suite(.serialized)
struct WebSourceGuaranteesCLITests {
    @Test(
        "a page served empty is a known failure next run (304, not downloaded); an emptied sitemap is refused by the mass-delete guard"
    )
    func guarantees() async throws {
        let ws = try Workspace("web-guarantees")
        defer { ws.cleanUp() }
        let site = WebSourceCLITests.Site(server: try await StandInServer.launch(script: "web_server.py"))
        defer { site.server.stop() }
        try WebSourceCLITests.pipeline(base: site.server.baseURL)
            .write(to: ws.file("http.yaml"), atomically: true, encoding: .utf8)

        try await site.put("/direct.txt", "A page named in the list, about reservoirs.\n", type: "text/plain")
        try await site.put("/old-guide", "<html><body><p>The old guide, about locks and weirs.</p></body></html>")
        let pages = ["/docs/a.html", "/docs/b.html", "/docs/c.html"]
        for (index, page) in pages.enumerated() {
            try await site.put(page, "<html><body><p>Page \(index) on canals and their keepers.</p></body></html>")
        }
        try await site.put("/docs/empty.txt", "", type: "text/plain")
        try await site.put(
            "/sitemap-index.xml",
            site.sitemap(pages + ["/docs/empty.txt"]),
            type: "application/xml"
        )
        let main = ws.target("main")

        // 1. The first run: the empty page fails (exit 2), the others are indexed.
        let firstStats = ws.file("first.stats.json")
        let first = try await WebSourceCLITests.run(ws, main, ["--stats-json", firstStats.path])
        #expect(first.exitCode == 2, "\(first)")
        #expect(try ws.stats(firstStats)["documents_failed"] == 1)
        let loaded = try await WebSourceCLITests.content(ws, main)
        #expect(WebSourceCLITests.keys(loaded).count == 5)

        // 2. The next run: the empty page answers 304, so its failure cannot have changed: known, not
        // downloaded again, exit 0.
        let before = try await site.stats()
        let secondStats = ws.file("second.stats.json")
        let second = try await WebSourceCLITests.run(ws, main, ["--stats-json", secondStats.path])
        #expect(second.exitCode == 0, "\(second)")
        #expect(try ws.stats(secondStats)["documents_known_failures"] == 1)
        let after = try await site.stats()
        #expect(after.notModified - before.notModified == 6, "every page, the empty one too, answers 304")
        #expect(after.full - before.full == 1, "only the sitemap is downloaded")

        // 3. The sitemap comes back empty: four of six documents would go. --prune without
        // --allow-mass-delete is refused (exit 7) and the index keeps everything.
        try await site.put("/sitemap-index.xml", site.sitemap([]), type: "application/xml")
        let refused = try await WebSourceCLITests.run(ws, main, ["--prune"])
        #expect(refused.exitCode == 7, "\(refused)")
        #expect(refused.stderr.contains("max_delete_fraction"), "\(refused)")
        #expect(try await WebSourceCLITests.content(ws, main) == loaded, "an emptied sitemap deleted nothing")
    }
}
