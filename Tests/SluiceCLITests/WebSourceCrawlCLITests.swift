import Foundation
import SluiceCore
import SluiceTesting
import Testing

/// `source.http.start_urls` through the `sluice` binary against a small site on loopback (`web_server.py`):
/// the crawl follows links on the start URL's site only, within `max_depth`, not into what robots.txt or
/// `exclude` leave out, never into a page that is not HTML; a no-op crawl asks each page once
/// conditionally and reads no body (the links kept in the state); `--prune` deletes only a page asked and
/// gone (410), never one the crawl did not reach because it stopped at `max_pages` or a page linking to it
/// failed; `--shard` splits the pages, every shard walking the link graph.
@Suite(.serialized)
struct WebSourceCrawlCLITests {
    typealias Site = WebSourceCLITests.Site

    static func pipeline(base: String, maxDepth: Int = 2, maxPages: Int = 100) -> String {
        Workspace.pipelineYAML.replacingOccurrences(
            of: """
                source:
                  path: ./corpus
                  include: ["**/*.txt", "**/*.md"]
                  exclude: ["**/.git/**"]

                """,
            with: """
                source:
                  kind: http
                  http:
                    start_urls: ["\(base)/start"]
                    max_depth: \(maxDepth)
                    max_pages: \(maxPages)
                    delay_seconds: 0
                    max_retries: 0
                  include: ["**"]
                  exclude: ["**/excluded/**"]

                """
        )
    }

    static func page(_ text: String, links: [String]) -> String {
        "<html><body><p>\(text)</p>" + links.map { "<a href=\"\($0)\">link</a>" }.joined() + "</body></html>"
    }

    /// The site: start → a, b, doc.txt (and links never followed); a → deep/c → deep/deeper; b → b2.
    static func build(_ site: Site) async throws {
        let other = "http://localhost:\(site.server.port)"
        try await site.put(
            "/start",
            page(
                "The start page about canals.",
                links: [
                    "a.html", "/b.html#section", "doc.txt", "\(other)/offsite.html", "/private/x.html",
                    "/excluded/e.html", "mailto:someone@example.com", "./a.html",
                ]
            )
        )
        try await site.put("/a.html", page("Page a about locks.", links: ["deep/c.html", "/start"]))
        try await site.put("/deep/c.html", page("Page c about weirs.", links: ["deeper.html"]))
        try await site.put("/deep/deeper.html", page("Too deep to be read.", links: []))
        try await site.put("/b.html", page("Page b about dams.", links: ["b2.html"]), validators: "last-modified")
        try await site.put("/b2.html", page("Page b2 about spillways.", links: []))
        try await site.put(
            "/doc.txt",
            "A text file about sluices. <a href=\"/never.html\">not a link</a>\n",
            type: "text/plain"
        )
        try await site.put("/never.html", page("Linked from text only.", links: []))
        try await site.put("/offsite.html", page("Another site.", links: []))
        try await site.put("/private/x.html", page("Private.", links: []))
        try await site.put("/excluded/e.html", page("Excluded.", links: []))
        try await site.robots("User-agent: *\nDisallow: /private/\n")
    }

    static func run(_ ws: Workspace, _ target: Workspace.Target, _ extra: [String] = []) async throws -> CommandResult {
        try await WebSourceCLITests.run(ws, target, extra)
    }

    static func keys(_ ws: Workspace, _ target: Workspace.Target) async throws -> Set<String> {
        WebSourceCLITests.keys(try await WebSourceCLITests.content(ws, target))
    }

    @Test("a same-site crawl within its depth; a no-op crawl reads no body; --prune deletes only what is gone")
    func crawl() async throws {
        let ws = try Workspace("web-crawl")
        defer { ws.cleanUp() }
        let site = Site(server: try await StandInServer.launch(script: "web_server.py"))
        defer { site.server.stop() }
        let host = "127.0.0.1:\(site.server.port)"
        try await Self.build(site)
        try Self.pipeline(base: site.server.baseURL).write(to: ws.file("http.yaml"), atomically: true, encoding: .utf8)

        // 1. The first crawl: start, its links on the same site, their links (depth 2), nothing further.
        let main = ws.target("main")
        let first = try await Self.run(ws, main)
        #expect(first.exitCode == 0, "\(first)")
        let crawled: Set<String> = [
            "\(host)/start", "\(host)/a.html", "\(host)/b.html", "\(host)/doc.txt", "\(host)/deep/c.html",
            "\(host)/b2.html",
        ]
        #expect(try await Self.keys(ws, main) == crawled)
        var requests = try await site.requests()
        let asked = requests.map(\.path)
        for never in ["/deep/deeper.html", "/never.html", "/private/x.html", "/excluded/e.html", "/offsite.html"] {
            #expect(!asked.contains(never), "\(never) is never asked: \(asked)")
        }
        #expect(asked.count == crawled.count, "each page asked once: \(asked)")

        // 2. A no-op crawl: one conditional request per page, each a 304, no body read (links kept).
        let before = try await site.stats()
        let noop = try await Self.run(ws, main)
        #expect(noop.exitCode == 0, "\(noop)")
        let after = try await site.stats()
        requests = try await site.requests()
        #expect(after.get - before.get == crawled.count, "\(requests.map(\.path).suffix(10))")
        #expect(after.notModified - before.notModified == crawled.count)
        #expect(after.full == before.full, "no page body is read by a no-op crawl")

        // 3. Bounded by count: a crawl that stops after 2 pages deletes nothing with --prune.
        try Self.pipeline(base: site.server.baseURL, maxPages: 2).write(
            to: ws.file("http.yaml"),
            atomically: true,
            encoding: .utf8
        )
        let bounded = try await Self.run(ws, main, ["--prune"])
        #expect(bounded.exitCode == 0, "\(bounded)")
        #expect(bounded.stderr.contains("max_pages"), "the run says the crawl stopped at its bound: \(bounded.stderr)")
        #expect(try await Self.keys(ws, main) == crawled, "pages the crawl did not reach are not deleted")

        // 4. A parent that fails (500): the pages only it links to are not reached, and not deleted; a page
        // asked and gone (410) is.
        try Self.pipeline(base: site.server.baseURL).write(to: ws.file("http.yaml"), atomically: true, encoding: .utf8)
        try await site.fail("/a.html", status: 500)
        try await site.gone("/b2.html", status: 410)
        let failing = try await Self.run(ws, main, ["--prune"])
        #expect(failing.exitCode == 2, "a.html fails its document: \(failing)")
        #expect(try await Self.keys(ws, main) == crawled.subtracting(["\(host)/b2.html"]))

        // 5. The parent answers again, with a new link: the page it links to is added.
        try await site.fail("/a.html", status: 0)
        try await site.put("/a.html", Self.page("Page a about locks, now longer.", links: ["deep/c.html", "a3.html"]))
        try await site.put("/a3.html", Self.page("Page a3 about culverts.", links: []))
        let healed = try await Self.run(ws, main, ["--prune"])
        #expect(healed.exitCode == 0, "\(healed)")
        #expect(
            try await Self.keys(ws, main) == crawled.subtracting(["\(host)/b2.html"]).union(["\(host)/a3.html"])
        )
    }

    @Test("--shard K/N (0/2, 1/2): every shard walks the link graph; the shards' pages together are the whole crawl")
    func shards() async throws {
        let ws = try Workspace("web-crawl-shards")
        defer { ws.cleanUp() }
        let site = Site(server: try await StandInServer.launch(script: "web_server.py"))
        defer { site.server.stop() }
        try await Self.build(site)
        try Self.pipeline(base: site.server.baseURL).write(to: ws.file("http.yaml"), atomically: true, encoding: .utf8)
        let whole = ws.target("whole")
        #expect(try await Self.run(ws, whole).exitCode == 0)
        let all = try await Self.keys(ws, whole)
        var union: Set<String> = []
        for shard in 0..<2 {
            let target = ws.target("shard-\(shard)")
            let result = try await Self.run(ws, target, ["--shard", "\(shard)/2"])
            #expect(result.exitCode == 0, "\(result)")
            let keys = try await Self.keys(ws, target)
            #expect(union.isDisjoint(with: keys), "a page belongs to one shard")
            union.formUnion(keys)
        }
        #expect(union == all)
    }

    @Test("a dry run of a crawl reports the pages it would add and writes nothing")
    func dryRun() async throws {
        let ws = try Workspace("web-crawl-dry")
        defer { ws.cleanUp() }
        let site = Site(server: try await StandInServer.launch(script: "web_server.py"))
        defer { site.server.stop() }
        try await Self.build(site)
        try Self.pipeline(base: site.server.baseURL).write(to: ws.file("http.yaml"), atomically: true, encoding: .utf8)
        let main = ws.target("main")
        let dry = try await Self.run(ws, main, ["--dry-run"])
        #expect(dry.exitCode == 0, "\(dry)")
        #expect(dry.stdout.contains("6") || dry.stderr.contains("6"), "six pages to add: \(dry)")
        #expect(!FileManager.default.fileExists(atPath: main.state.path), "a dry run makes no state folder")
        let check = try await ws.sluice(["check", ws.file("http.yaml").path] + main.arguments, timeout: .seconds(120))
        #expect(check.exitCode == 0, "\(check)")
        #expect(check.stdout.contains("a crawl from 1 start URL"), "\(check.stdout)")
    }

    /// Session 46's campaign: after SIGTERM the crawl went on asking every page it found (a 1,000-page site:
    /// minutes), because only the walk after it looked at the signal. Seen failing before the fix (all 40
    /// pages asked).
    @Test("SIGTERM stops a crawl: no deeper level is asked, the run exits 4, and a re-run finishes the crawl")
    func signalStopsTheCrawl() async throws {
        let ws = try Workspace("web-crawl-sigterm")
        defer { ws.cleanUp() }
        let site = Site(server: try await StandInServer.launch(script: "web_server.py"))
        defer { site.server.stop() }
        let base = site.server.baseURL
        // A chain of 40 pages, one a level, asked 0.2 s apart (the host's delay): 8 s of crawling.
        try await site.put("/start", Self.page("The start of a chain about canals.", links: ["p1.html"]))
        for index in 1...39 {
            try await site.put(
                "/p\(index).html",
                Self.page("Chain page \(index) about locks.", links: ["p\(index + 1).html"])
            )
        }
        let yaml = Self.pipeline(base: base, maxDepth: 100, maxPages: 1_000)
            .replacingOccurrences(of: "delay_seconds: 0\n", with: "delay_seconds: 0.2\n")
        try yaml.write(to: ws.file("http.yaml"), atomically: true, encoding: .utf8)
        let main = ws.target("main")
        let process = try ws.start(
            ["run", ws.file("http.yaml").path] + main.arguments + ["--quiet", "--log-level", "info"]
        )
        let deadline = ContinuousClock.now + .seconds(120)
        while try await site.stats().get < 3, ContinuousClock.now < deadline, process.isRunning {
            try await Task.sleep(for: .milliseconds(20))
        }
        try #require(process.isRunning, "the run ended before the signal: \(process.stderrSoFar)")
        process.send(SIGTERM)
        // Counted once the run says it saw the signal (it sets its stop flag first): whatever the machine's
        // speed, what is asked after that is the request in flight, and one the crawl's loop had begun.
        #expect(await process.waitForStderr(containing: "signal received", timeout: .seconds(120)))
        let atSignal = try await site.stats().get
        let result = try await process.wait(timeout: .seconds(120))
        #expect(result.exitCode == 4, "\(result)")
        let asked = try await site.stats().get
        #expect(asked <= atSignal + 2, "pages asked after SIGTERM: \(asked - atSignal) (\(asked) in all)")
        let resumed = try await Self.run(ws, main)
        #expect(resumed.exitCode == 0, "\(resumed)")
        #expect(try await Self.keys(ws, main).count == 40)
    }
}
