import Foundation
import SluiceCore
import SluiceHTTP
import SluiceTesting
import Testing

/// `source.kind: http` through the `sluice` binary, against a small web site on loopback (`web_server.py`):
/// a sitemap index and a URL list; a first load (HTML served without an extension read as HTML, a
/// redirect followed, a URL robots.txt disallows never fetched); a no-op run makes only conditional
/// requests (304s) and downloads no page; a page changed, one gone (410) and one dropped from the sitemap,
/// with `--prune`; a 5xx fails its document and prunes nothing; a sitemap that fails stops the run
/// (exit 6) and prunes nothing; a URL whose host refuses connections among reachable ones fails only its
/// document (exit 2), and a site that cannot be reached at all stops the run (exit 6) and prunes nothing.
@Suite(.serialized)
struct WebSourceCLITests {
    struct Site {
        let server: StandInServer

        func put(
            _ path: String,
            _ text: String,
            type: String = "text/html; charset=utf-8",
            validators: String = "etag"
        )
            async throws
        {
            try await control(
                "PUT",
                "page?path=\(Self.encode(path))&type=\(Self.encode(type))&validators=\(validators)",
                text
            )
        }

        /// Serves `bytes` as they are (a gzipped sitemap: the file's bytes, no `Content-Encoding`).
        func put(_ path: String, bytes: [UInt8], type: String) async throws {
            let answer = try await HTTPClient.shared.send(
                HTTPRequest(
                    method: "PUT",
                    url: server.baseURL
                        + "/_standin/page?path=\(Self.encode(path))&type=\(Self.encode(type))&validators=etag",
                    body: bytes
                )
            )
            #expect(answer.status == 200, "PUT \(path): \(answer.bodyText)")
        }

        func gone(_ path: String, status: Int) async throws {
            try await control("DELETE", "page?path=\(Self.encode(path))&status=\(status)")
        }

        func fail(_ path: String, status: Int) async throws {
            try await control("POST", "fail?path=\(Self.encode(path))&status=\(status)")
        }

        func redirect(_ path: String, to target: String) async throws {
            try await control("POST", "redirect?path=\(Self.encode(path))&to=\(Self.encode(target))&status=301")
        }

        func robots(_ text: String) async throws { try await control("PUT", "robots", text) }

        /// Page GETs, 304s, 200s with a body, the paths asked and robots.txt GETs, so far.
        func stats() async throws -> (get: Int, notModified: Int, full: Int, paths: [String], robots: Int) {
            let answer = try await HTTPClient.shared.send(HTTPRequest(url: server.baseURL + "/_standin/stats"))
            let object = try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any] ?? [:]
            return (
                object["get"] as? Int ?? -1, object["not_modified"] as? Int ?? -1, object["full"] as? Int ?? -1,
                object["paths"] as? [String] ?? [], object["robots"] as? Int ?? -1
            )
        }

        /// Every page GET so far: (path, Host header, arrival in seconds), in order.
        func requests() async throws -> [(path: String, host: String, time: Double)] {
            let answer = try await HTTPClient.shared.send(HTTPRequest(url: server.baseURL + "/_standin/stats"))
            let object = try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any] ?? [:]
            let paths = object["paths"] as? [String] ?? []
            let hosts = object["hosts"] as? [String] ?? []
            let times = (object["times"] as? [Any] ?? []).map { ($0 as? NSNumber)?.doubleValue ?? -1 }
            return zip(paths, zip(hosts, times)).map { ($0.0, $0.1.0, $0.1.1) }
        }

        func sitemap(_ pages: [String]) -> String {
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n"
                + pages.map { "  <url><loc>\(server.baseURL)\($0)</loc><lastmod>2026-11-28</lastmod></url>\n" }.joined()
                + "</urlset>\n"
        }

        private func control(_ method: String, _ path: String, _ body: String = "") async throws {
            let answer = try await HTTPClient.shared.send(
                HTTPRequest(method: method, url: server.baseURL + "/_standin/" + path, body: Array(body.utf8))
            )
            #expect(answer.status == 200, "\(method) \(path): \(answer.bodyText)")
        }

        static func encode(_ text: String) -> String {
            text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
        }
    }

    static func pipeline(base: String) -> String {
        Workspace.pipelineYAML.replacingOccurrences(
            of: """
                source:
                  path: ./corpus
                  include: ["**/*.txt", "**/*.md"]

                """,
            with: """
                source:
                  kind: http
                  http:
                    urls: ["\(base)/direct.txt", "\(base)/old-guide"]
                    sitemaps: ["\(base)/sitemap-index.xml"]
                    delay_seconds: 0
                    max_retries: 1
                  include: ["**"]

                """
        )
    }

    static func run(_ ws: Workspace, _ target: Workspace.Target, _ extra: [String] = []) async throws -> CommandResult {
        try await ws.sluice(
            ["run", ws.file("http.yaml").path] + target.arguments + ["--quiet", "--log-level", "info"] + extra,
            timeout: .seconds(240)
        )
    }

    /// The records as (document key, text), sorted.
    static func content(_ ws: Workspace, _ target: Workspace.Target) async throws -> [String] {
        let process = try ws.start(["export", ws.file("http.yaml").path] + target.arguments)
        let result = try await process.wait(timeout: .seconds(60))
        #expect(result.exitCode == 0, "\(result)")
        return try Export.records(Data(result.stdout.utf8)).map { "\($0.documentKey) \($0.text)" }.sorted()
    }

    static func keys(_ content: [String]) -> Set<String> {
        Set(content.map { String($0.split(separator: " ", maxSplits: 1)[0]) })
    }

    @Test(
        "first load, a no-op run of 304s, changes and deletions with --prune, a 5xx and a failed sitemap prune nothing"
    )
    func lifecycle() async throws {
        let ws = try Workspace("web-source")
        defer { ws.cleanUp() }
        let site = Site(server: try await StandInServer.launch(script: "web_server.py"))
        defer { site.server.stop() }
        let base = site.server.baseURL
        let host = "127.0.0.1:\(site.server.port)"
        try Self.pipeline(base: base).write(to: ws.file("http.yaml"), atomically: true, encoding: .utf8)

        try await site.put(
            "/docs/intro",
            "<html><head><title>Intro</title></head><body><h1>Welcome</h1><p>The intro page explains pumps and valves.</p></body></html>"
        )
        try await site.put(
            "/docs/guide.html",
            "<html><body><p>The guide covers maintenance of the sluice gates in spring.</p></body></html>",
            validators: "last-modified"
        )
        try await site.put("/docs/notes.md", "# Notes\n\nField notes about water levels.\n", type: "text/markdown")
        try await site.put("/direct.txt", "A page named directly in the list, about reservoirs.\n", type: "text/plain")
        try await site.put(
            "/guide-v2.html",
            "<html><body><p>The second guide, reached by a redirect.</p></body></html>"
        )
        try await site.redirect("/old-guide", to: "/guide-v2.html")
        try await site.put("/private/secret.html", "<html><body><p>Never to be fetched.</p></body></html>")
        try await site.robots("User-agent: *\nDisallow: /private/\n")
        try await site.put(
            "/sitemap-index.xml",
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
              <sitemap><loc>\(base)/sitemap-a.xml</loc></sitemap>
              <sitemap><loc>\(base)/sitemap-b.xml.gz</loc></sitemap>
            </sitemapindex>
            """,
            type: "application/xml"
        )
        try await site.put(
            "/sitemap-a.xml",
            site.sitemap(["/docs/intro", "/docs/guide.html", "/private/secret.html"]),
            type: "application/xml"
        )
        // A gzipped sitemap, sent as the file's bytes (as `sitemap.xml.gz` files are served).
        try await site.put(
            "/sitemap-b.xml.gz",
            bytes: GzipWriter.gzip(Array(site.sitemap(["/docs/notes.md"]).utf8)),
            type: "application/gzip"
        )
        let sitemaps = ["/sitemap-index.xml", "/sitemap-a.xml", "/sitemap-b.xml.gz"]

        // 1. A first load: every page but the disallowed one; the HTML without an extension read as HTML;
        // the redirect's target under the key of the URL listed.
        let main = ws.target("main")
        let first = try await Self.run(ws, main)
        #expect(first.exitCode == 0, "\(first)")
        let loaded = try await Self.content(ws, main)
        #expect(
            Self.keys(loaded) == [
                "\(host)/direct.txt", "\(host)/old-guide", "\(host)/docs/intro", "\(host)/docs/guide.html",
                "\(host)/docs/notes.md",
            ]
        )
        #expect(loaded.contains { $0.contains("The intro page explains pumps and valves.") && !$0.contains("<p>") })
        #expect(loaded.contains { $0.hasPrefix("\(host)/old-guide ") && $0.contains("reached by a redirect") })
        var stats = try await site.stats()
        #expect(!stats.paths.contains("/private/secret.html"), "a URL robots.txt disallows is never fetched")
        #expect(first.stderr.contains("disallowed by robots.txt"), "\(first.stderr)")

        // 2. A no-op run: the sitemaps again, and a conditional request per page, each answered 304.
        let before = stats
        let noopStats = ws.file("noop.stats.json")
        let noop = try await Self.run(ws, main, ["--stats-json", noopStats.path])
        #expect(noop.exitCode == 0, "\(noop)")
        stats = try await site.stats()
        let asked = Array(stats.paths.dropFirst(before.paths.count))
        #expect(stats.notModified - before.notModified == 5, "\(asked)")
        #expect(stats.full - before.full == sitemaps.count, "no page is downloaded: \(asked)")
        // The stats' fetch row: every request the server saw (robots.txt, sitemaps, pages), each with its
        // latency; no document was downloaded (304s), so no bytes (sitemaps and robots.txt do not count).
        let fetch = try ws.stats(noopStats).decoded.phases.first { $0.name == "fetch" }
        #expect(
            fetch?.itemsOut == (stats.get - before.get) + (stats.robots - before.robots),
            "\(String(describing: fetch))"
        )
        #expect(fetch?.bytes == 0)
        #expect((fetch?.latencyQuantile(0.5) ?? 0) > 0)
        #expect(try await Self.content(ws, main) == loaded)

        // 3. Changed, gone (410), dropped from the sitemap, added; with --prune.
        try await site.put(
            "/docs/intro",
            "<html><body><p>The intro page now explains turbines instead.</p></body></html>"
        )
        try await site.gone("/docs/guide.html", status: 410)
        try await site.put("/docs/added.html", "<html><body><p>A page added to the sitemap.</p></body></html>")
        try await site.put(
            "/sitemap-b.xml.gz",
            bytes: GzipWriter.gzip(Array(site.sitemap(["/docs/added.html"]).utf8)),
            type: "application/gzip"
        )
        let changed = try await Self.run(ws, main, ["--prune", "--allow-mass-delete"])
        #expect(changed.exitCode == 0, "\(changed)")
        let afterChanges = try await Self.content(ws, main)
        #expect(
            Self.keys(afterChanges) == [
                "\(host)/direct.txt", "\(host)/old-guide", "\(host)/docs/intro", "\(host)/docs/added.html",
            ]
        )
        #expect(afterChanges.contains { $0.contains("explains turbines instead") })
        #expect(!afterChanges.contains { $0.contains("pumps and valves") })

        // 4. A page answering 500 (after its retry): its document fails, nothing is pruned.
        try await site.fail("/docs/intro", status: 500)
        let serverError = try await Self.run(ws, main, ["--prune", "--allow-mass-delete"])
        #expect(serverError.exitCode == 2, "\(serverError)")
        #expect(try await Self.content(ws, main) == afterChanges, "a 5xx deletes nothing")
        try await site.fail("/docs/intro", status: 0)

        // 5. A sitemap that fails: the listing is incomplete, the run stops (exit 6), nothing is pruned.
        try await site.fail("/sitemap-b.xml.gz", status: 503)
        let failedListing = try await Self.run(ws, main, ["--prune", "--allow-mass-delete"])
        #expect(failedListing.exitCode == 6, "\(failedListing)")
        #expect(try await Self.content(ws, main) == afterChanges, "a failed listing deletes nothing")
    }

    /// A pipeline that names its pages in a list (no sitemap: the listing makes no request).
    static func pipeline(urls: [String]) -> String {
        Workspace.pipelineYAML.replacingOccurrences(
            of: """
                source:
                  path: ./corpus
                  include: ["**/*.txt", "**/*.md"]

                """,
            with: """
                source:
                  kind: http
                  http:
                    urls: [\(urls.map { "\"\($0)\"" }.joined(separator: ", "))]
                    delay_seconds: 0
                    max_retries: 1
                  include: ["**"]

                """
        )
    }

    @Test(
        "a site that cannot be reached stops the run (exit 6) and prunes nothing; one unreachable URL among reachable ones fails only its document"
    )
    func unreachableSite() async throws {
        let ws = try Workspace("web-unreachable")
        defer { ws.cleanUp() }
        let site = Site(server: try await StandInServer.launch(script: "web_server.py"))
        defer { site.server.stop() }
        let base = site.server.baseURL
        let host = "127.0.0.1:\(site.server.port)"
        try await site.put("/a.txt", "A page about weirs.\n", type: "text/plain")
        try await site.put("/b.txt", "A page about locks.\n", type: "text/plain")
        let pages = ["\(base)/a.txt", "\(base)/b.txt"]
        let main = ws.target("main")

        // 1. A first load.
        try Self.pipeline(urls: pages).write(to: ws.file("http.yaml"), atomically: true, encoding: .utf8)
        let first = try await Self.run(ws, main)
        #expect(first.exitCode == 0, "\(first)")
        let loaded = try await Self.content(ws, main)
        #expect(Self.keys(loaded) == ["\(host)/a.txt", "\(host)/b.txt"])

        // 2. One URL on a host that refuses connections, among reachable ones: only its document fails
        // (exit 2), and the others are kept.
        try Self.pipeline(urls: pages + ["http://127.0.0.1:9/c.txt"])
            .write(to: ws.file("http.yaml"), atomically: true, encoding: .utf8)
        let mixed = try await Self.run(ws, main, ["--prune", "--allow-mass-delete"])
        #expect(mixed.exitCode == 2, "\(mixed)")
        #expect(try await Self.content(ws, main) == loaded)

        // 3. The site is down: every request fails to connect. A dependency failure before any document
        // (exit 6), as for an S3 endpoint that does not answer; nothing is pruned.
        try Self.pipeline(urls: pages).write(to: ws.file("http.yaml"), atomically: true, encoding: .utf8)
        site.server.stop()
        let down = try await Self.run(ws, main, ["--prune", "--allow-mass-delete"])
        #expect(down.exitCode == 6, "\(down)")
        #expect(down.stderr.contains("cannot be reached"), "\(down.stderr)")
        #expect(try await Self.content(ws, main) == loaded, "an unreachable site deletes nothing")
    }
}
