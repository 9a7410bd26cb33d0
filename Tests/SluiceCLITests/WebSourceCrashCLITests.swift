import Foundation
import SluiceCore
import SluiceTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// kill -9 of the `sluice` binary during a run of the http source (a crawl over a loopback site), at named
/// points (`SLUICE_DEBUG_CRASH_AT`, not timers): after a page is downloaded into `fetch/` and before it is
/// extracted, after the store write of a document and before its checkpoint, after a commit. The same
/// command then resumes: the export equals an uninterrupted run's (same records, none twice), the
/// checkpoint's counts are the same, and the run after it asks every page once conditionally and reads no
/// body (nothing unchanged downloaded again).
@Suite(.serialized)
struct WebSourceCrashCLITests {
    @Test("kill -9 during a crawl, at named points, then resume: the same records as an uninterrupted run")
    func killedAndResumed() async throws {
        let ws = try Workspace("web-crash")
        defer { ws.cleanUp() }
        let site = WebSourceCLITests.Site(server: try await StandInServer.launch(script: "web_server.py"))
        defer { site.server.stop() }
        try await WebSourceCrawlCLITests.build(site)
        try WebSourceCrawlCLITests.pipeline(base: site.server.baseURL).write(
            to: ws.pipeline,
            atomically: true,
            encoding: .utf8
        )
        let arguments = { (target: Workspace.Target) in
            ["run", ws.pipeline.path] + target.arguments + ["--quiet", "--log-level", "info"]
        }

        let fresh = ws.target("fresh")
        let uninterrupted = try await ws.sluice(arguments(fresh), timeout: .seconds(240))
        #expect(uninterrupted.exitCode == 0, "\(uninterrupted)")
        let freshExport = try await ws.export(fresh)
        let freshStatus = try await ws.status(fresh)

        let crashed = ws.target("crashed")
        var kills: [String] = []
        for point in ["web.fetched@3", "upsert.sink-written@2", "commit.committed@1"] {
            let result = try await ws.sluice(
                arguments(crashed),
                environment: ["SLUICE_DEBUG_CRASH_AT": point],
                timeout: .seconds(240)
            )
            if result.signaled && result.status == SIGKILL {
                kills.append(point)
            } else {
                #expect(result.exitCode == 0, "\(point): \(result)")
            }
        }
        #expect(kills.count == 3, "every named point is reached in a run and kills it: \(kills)")

        let resumed = try await ws.sluice(arguments(crashed), timeout: .seconds(240))
        #expect(resumed.exitCode == 0, "\(resumed)")
        expectSameExport(try await ws.export(crashed), freshExport, "resumed after kills at \(kills) vs. uninterrupted")
        let status = try await ws.status(crashed)
        #expect(status.documents == freshStatus.documents, "\(status.text)")

        // Nothing left half-done: the next run is a no-op — one conditional request per page, no body.
        let before = try await site.stats()
        let noop = try await ws.sluice(arguments(crashed), timeout: .seconds(240))
        #expect(noop.exitCode == 0, "\(noop)")
        let after = try await site.stats()
        #expect(after.full == before.full, "no unchanged page is downloaded again")
        #expect(after.notModified - before.notModified == after.get - before.get)
        let fetch = crashed.state.appendingPathComponent("fetch")
        let left = (try? FileManager.default.contentsOfDirectory(atPath: fetch.path)) ?? []
        #expect(left.isEmpty, "no download is left in fetch/: \(left)")
    }
}
