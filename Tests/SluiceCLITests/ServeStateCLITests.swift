import Foundation
import SluiceClient
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The state as `sluice serve` reports it (issue 30): `/ready` read the checkpoint with `try?`, so a damaged
/// state file showed as ready without a count, and `POST /v1/runs` accepted a run that could only fail.
@Suite(.serialized)
struct ServeStateCLITests {
    @Test(
        "a damaged state: /ready is 503 and says damaged and how to recover; POST /v1/runs is 503 state-corrupt",
        arguments: [StateDamageCLITests.Damage.halfLength, .zeroLength]
    )
    func damagedState(_ damage: StateDamageCLITests.Damage) async throws {
        let ws = try Workspace("serve-state-\(damage.rawValue)")
        defer { ws.cleanUp() }
        let main = try await StateDamageCLITests.damagedState(ws, damage)
        let variable = "SLUICE_TEST_SERVE_STATE_TOKEN"
        let token = "serve-state-token-0123456789"
        let server = try await ServeProcess.start(
            ws,
            main,
            ["--set", "serve.api_key_env=\(variable)"],
            environment: [variable: token]
        )

        // Open (a probe carries no token): the state's condition by its code, no path, no message.
        let open = try await server.client().ready()
        #expect(!open.ready, "\(open)")
        #expect(open.state?.status == "damaged", "\(open)")
        #expect(open.state?.detail == "state-corrupt", "\(open)")
        #expect(open.store.ok && open.embedder.ok, "the store and the embedder still answer: \(open)")
        // With the token: what happened and how to recover, as `sluice run` says it.
        let detailed = try await server.client(token: token).ready()
        let detail = try #require(detailed.state?.detail)
        #expect(detail.contains("damaged") && detail.contains("new state"), "\(detail)")

        let run = try await server.exchange(
            "POST",
            "/v1/runs",
            body: Data("{}".utf8),
            headers: ["Authorization": "Bearer \(token)"]
        )
        let text = String(decoding: run.body, as: UTF8.self)
        #expect(run.status == 503, "\(run.status): \(text)")
        #expect(ServeProcess.errorCode(run.body) == "state-corrupt", "\(text)")
        #expect(text.contains("new state") && text.contains("<state>"), "how to recover, the path redacted: \(text)")
        #expect(!text.contains(main.state.path), "\(text)")
        _ = try await server.stop()
    }

    /// A run record that does not decode was skipped (`recentRuns` read them with `try?`): `status` showed
    /// fewer runs and `/ready` an older last run, as if nothing were wrong. Every run record sluice has
    /// written decodes with today's type (each field added since is optional), so one that does not is damage.
    @Test(
        "a damaged run record: status exits 1 and says how to recover, /ready says damaged, verify --repair forgets it"
    )
    func damagedRunRecord() async throws {
        let ws = try Workspace("serve-state-run-record")
        defer { ws.cleanUp() }
        try Corpus.write(count: 3, into: ws.corpus, seed: 0x5EED_1402)
        let main = ws.target("main")
        try await ws.run(main, expecting: 0)
        // Every copy of the run record: its JSON no longer parses.
        let data = main.state.appendingPathComponent("data.mdb")
        try #require(try StateDamageCLITests.overwrite(#""configurationHash""#, in: data) > 0, "no run record found")

        let status = try await ws.sluice(["status", ws.pipeline.path] + main.arguments)
        #expect(status.exitCode == 1, "\(status)")
        #expect(status.stderr.contains("damaged") && status.stderr.contains("verify --repair"), "\(status)")

        let server = try await ServeProcess.start(ws, main)
        let ready = try await server.client().ready()
        #expect(!ready.ready && ready.state?.status == "damaged", "\(ready)")
        _ = try await server.stop()

        let repair = try await ws.sluice(["verify", ws.pipeline.path, "--repair"] + main.arguments)
        #expect(repair.exitCode == 0, "\(repair)")
        #expect(repair.stdout.contains("unreadable run records forgotten: 1"), "\(repair)")
        let after = try await ws.sluice(["status", ws.pipeline.path] + main.arguments)
        #expect(after.exitCode == 0, "\(after)")
    }

    @Test("no state yet (a fresh index) is ready: state absent")
    func absentState() async throws {
        let ws = try Workspace("serve-state-absent")
        defer { ws.cleanUp() }
        let target = ws.target("t")
        try Corpus.write(count: 2, into: ws.corpus, seed: 0x5EED_1401)
        let server = try await ServeProcess.start(ws, target)
        let ready = try await server.client().ready()
        #expect(ready.state?.status == "absent", "\(ready)")
        #expect(ready.documents == nil && ready.lastRun == nil, "\(ready)")
        _ = try await server.stop()
        try await ws.run(target, expecting: 0)
        let again = try await ServeProcess.start(ws, target)
        let after = try await again.client().ready()
        #expect(after.ready && after.state?.status == "ok" && after.documents == 2, "\(after)")
        _ = try await again.stop()
    }
}
