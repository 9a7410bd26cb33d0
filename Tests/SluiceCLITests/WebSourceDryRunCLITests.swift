import Foundation
import SluiceCore
import SluiceTesting
import Testing

/// `sluice run --dry-run` on `source.kind: http` (issue 34): it says what a run would add, change and delete
/// from conditional requests alone, and writes nothing to the state — no download left in `fetch/`, no state
/// folder made before the first run — so the run after it still sees (and indexes) every change.
@Suite(.serialized)
struct WebSourceDryRunCLITests {
    /// Every file under `folder` with its size and modification time (empty when there is no folder), but
    /// LMDB's reader table (`lock.mdb`), which any reader of the state writes.
    static func snapshot(_ folder: URL) -> [String: String] {
        var files: [String: String] = [:]
        guard let walker = FileManager.default.enumerator(atPath: folder.path) else { return files }
        while let path = walker.nextObject() as? String {
            if path == "lock.mdb" { continue }
            let attributes = try? FileManager.default.attributesOfItem(
                atPath: folder.appendingPathComponent(path).path
            )
            let size = attributes?[.size] as? Int ?? -1
            let modified = (attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? -1
            files[path] = "\(size) \(modified)"
        }
        return files
    }

    @Test(
        "a dry run reports additions, changes and deletions from conditional requests and writes nothing to the state"
    )
    func dryRunWritesNothing() async throws {
        let ws = try Workspace("web-dry-run")
        defer { ws.cleanUp() }
        let site = WebSourceCLITests.Site(server: try await StandInServer.launch(script: "web_server.py"))
        defer { site.server.stop() }
        let base = site.server.baseURL
        let host = "127.0.0.1:\(site.server.port)"
        try await site.put("/a.html", "<html><body><p>A page about sluice gates.</p></body></html>")
        try await site.put("/b.txt", "A page about weirs.\n", type: "text/plain", validators: "last-modified")
        try await site.put(
            "/c.txt",
            "A page about locks, served without validators.\n",
            type: "text/plain",
            validators: "none"
        )
        try await site.put("/d.txt", "A page about canals, soon gone.\n", type: "text/plain")
        let pages = ["/a.html", "/b.txt", "/c.txt", "/d.txt"].map { base + $0 }
        try WebSourceCLITests.pipeline(urls: pages).write(to: ws.file("http.yaml"), atomically: true, encoding: .utf8)
        let main = ws.target("main")

        // 1. Before any run: everything is to add, and no state folder is made.
        let first = try await ws.sluice(["run", ws.file("http.yaml").path, "--dry-run"] + main.arguments)
        #expect(first.exitCode == 0, "\(first)")
        #expect(first.stdout.hasPrefix("dry run: 4 to add"), "\(first.stdout)")
        #expect(Self.snapshot(main.state).isEmpty, "a dry run made \(Self.snapshot(main.state).keys.sorted())")

        // 2. A first load, then changes: one page with an ETag changed, the one without validators changed,
        // the one with Last-Modified alone unchanged, one gone (410).
        let load = try await WebSourceCLITests.run(ws, main)
        #expect(load.exitCode == 0, "\(load)")
        let loaded = try await WebSourceCLITests.content(ws, main)
        try await site.put("/a.html", "<html><body><p>A page about turbines now.</p></body></html>")
        try await site.put(
            "/c.txt",
            "A page about dams now, still without validators.\n",
            type: "text/plain",
            validators: "none"
        )
        try await site.gone("/d.txt", status: 410)

        let before = Self.snapshot(main.state)
        let dry = try await ws.sluice(
            ["run", ws.file("http.yaml").path, "--dry-run", "--prune", "--allow-mass-delete"] + main.arguments
        )
        #expect(dry.exitCode == 0, "\(dry)")
        let lines = dry.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("dry run: 0 to add, 2 changed, ") == true, "\(dry.stdout)")
        #expect(lines.first?.contains(", 1 unchanged (skipped), ") == true, "\(dry.stdout)")
        #expect(lines.first?.contains("1 to delete") == true, "\(dry.stdout)")
        #expect(
            Set(lines.filter { $0.hasPrefix("  ") })
                == ["  change  \(host)/a.html", "  change  \(host)/c.txt", "  delete  \(host)/d.txt"],
            "\(dry.stdout)"
        )
        #expect(Self.snapshot(main.state) == before, "the dry run wrote to the state")
        #expect(try await WebSourceCLITests.content(ws, main) == loaded)

        // 3. The run after it sees every change the dry run reported.
        let real = try await WebSourceCLITests.run(ws, main, ["--prune", "--allow-mass-delete"])
        #expect(real.exitCode == 0, "\(real)")
        let after = try await WebSourceCLITests.content(ws, main)
        #expect(WebSourceCLITests.keys(after) == ["\(host)/a.html", "\(host)/b.txt", "\(host)/c.txt"])
        #expect(after.contains { $0.contains("about turbines now") })
        #expect(after.contains { $0.contains("about dams now") })
        #expect(Self.snapshot(main.state.appendingPathComponent("fetch")).isEmpty)
    }
}
