import Foundation
import SluiceClient
import SluiceTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `sluice serve` end to end: the real binary on a free loopback port over a small indexed corpus (hash
/// embedder), called through ``SluiceClient`` and raw HTTP. Nothing waits a fixed time: every wait polls
/// for an event under a generous deadline.
@Suite(.serialized)
struct ServeCLITests {
    /// A corpus whose keys hold slashes, indexed by `sluice run`.
    static func indexed(_ ws: Workspace, _ target: Workspace.Target) async throws -> [String] {
        let keys = ["notes/river.txt", "notes/deep/gate.md", "plain.txt", "reports/2026/q1 summary.txt"]
        for (index, key) in keys.enumerated() {
            let words = ["river flow and water", "sluice gate mechanics", "plain text", "quarterly summary"][index]
            try Corpus.write(
                String(repeating: "The \(words) paragraph number \(index). ", count: 20),
                to: ws.corpus.appendingPathComponent(key)
            )
        }
        try await ws.run(target, expecting: 0)
        return keys.sorted()
    }

    /// `sluice serve` on ``indexed(_:_:)``'s four documents (the target `t` of `ws`), started with `extra`
    /// settings as ``ServeProcess/start(_:_:_:environment:launcher:)`` starts it: the set-up of the tests
    /// that need a served index but not its target.
    static func served(
        _ ws: Workspace,
        _ extra: [String] = [],
        environment: [String: String?] = [:],
        launcher: [String] = []
    ) async throws -> ServeProcess {
        let target = ws.target("t")
        _ = try await indexed(ws, target)
        return try await ServeProcess.start(ws, target, extra, environment: environment, launcher: launcher)
    }

    @Test("search, documents, health, ready, metrics and the OpenAPI document, through the client; SIGTERM exits 0")
    func theAPI() async throws {
        let ws = try Workspace("serve-api")
        defer { ws.cleanUp() }
        let target = ws.target("t")
        let keys = try await Self.indexed(ws, target)
        let server = try await ServeProcess.start(ws, target)
        let client = server.client()

        #expect(try await client.health().status == "ok")
        let ready = try await client.ready()
        #expect(ready.ready && ready.store.ok && ready.embedder.ok)
        #expect(ready.documents == keys.count)
        #expect(ready.lastRun?.outcome == "success")

        let answer = try await client.search(SearchRequest(query: "sluice gate", k: 2))
        #expect(answer.results.count == 2)
        #expect(answer.results.first?.documentKey == "notes/deep/gate.md")
        let filtered = try await client.search(
            SearchRequest(query: "river", k: 5, filter: ["document_key": ["$eq": "plain.txt"]], mode: "vector")
        )
        #expect(filtered.results.allSatisfy { $0.documentKey == "plain.txt" })

        // Bad input is a 400 with a code, never a 5xx.
        for bad in [SearchRequest(query: "x", k: 0), SearchRequest(query: "  "), SearchRequest(query: "x", k: 101)] {
            await #expect(throws: SluiceClientError.self) { try await client.search(bad) }
            do {
                _ = try await client.search(bad)
            } catch let error as SluiceClientError {
                #expect(error.status == 400 && error.code == "usage", "\(error)")
            }
        }
        for body in [#"{"query": "x", "filter": {"page": {"$nope": 1}}}"#, "not json", #"{"query": 3}"#, "[]"] {
            let answer = try await server.exchange("POST", "/v1/search", body: Data(body.utf8))
            #expect(answer.status == 400, "\(body)")
            #expect(ServeProcess.errorCode(answer.body) == "usage")
        }
        let missing = try await server.exchange("GET", "/v1/nothing")
        #expect(missing.status == 404 && ServeProcess.errorCode(missing.body) == "not-found")

        // Documents: every key, a page at a time; a key with slashes, percent-encoded in one segment.
        var seen: [String] = []
        var cursor: String?
        repeat {
            let page = try await client.documents(cursor: cursor, limit: 3)
            seen += page.documents.map(\.key)
            cursor = page.nextCursor
        } while cursor != nil
        #expect(seen == keys)
        let detail = try await client.document(key: "reports/2026/q1 summary.txt")
        #expect(detail.document.status == "indexed")
        #expect(detail.chunks?.count == detail.document.chunks)
        do {
            _ = try await client.document(key: "no/such.txt")
            Issue.record("a missing document answered")
        } catch let error as SluiceClientError {
            #expect(error.status == 404 && error.code == "not-found")
        }

        let metrics = String(decoding: try await server.exchange("GET", "/metrics").body, as: UTF8.self)
        #expect(metrics.contains(#"sluice_http_requests_total{route="/v1/search",status="200"}"#))
        #expect(metrics.contains(#"sluice_http_requests_total{route="/v1/search",status="400"}"#))
        #expect(metrics.contains("sluice_documents \(keys.count)"))
        // The last run's figures, named as `sluice run --metrics-file` names them.
        #expect(metrics.contains(#"sluice_run_exit_code{pipeline="pipeline"} 0"#), "\(metrics)")
        #expect(metrics.contains(#"sluice_run_documents{pipeline="pipeline",outcome="upserted"} \#(keys.count)"#))

        let served = try await server.exchange("GET", "/openapi.json")
        let committed = try Data(contentsOf: Corpus.repositoryRoot.appendingPathComponent("docs/openapi.json"))
        #expect(served.body + Data("\n".utf8) == committed, "the served document is not docs/openapi.json")

        let result = try await server.stop()
        #expect(result.exitCode == 0, "\(result)")
    }

    @Test("POST /v1/runs runs in the background beside searches; 409 while another process holds the state lock")
    func runs() async throws {
        let ws = try Workspace("serve-runs")
        defer { ws.cleanUp() }
        let target = ws.target("t")
        _ = try await Self.indexed(ws, target)
        try Corpus.write("A new document about canal locks. ", to: ws.corpus.appendingPathComponent("new/canal.txt"))
        let server = try await ServeProcess.start(ws, target)
        let client = server.client()

        let started = try await client.startRun()
        #expect(started.state == "running")
        var run = started
        let deadline = ContinuousClock.now + .seconds(120)
        while !run.isFinished && ContinuousClock.now < deadline {
            _ = try await client.search(SearchRequest(query: "canal", k: 1))  // queries go on meanwhile
            try await Task.sleep(for: .milliseconds(20))
            run = try await client.run(id: started.id)
        }
        #expect(run.isFinished && run.outcome == "success" && run.exitCode == 0, "\(run)")
        #expect(run.documentsDone == 5)
        #expect(
            try await client.search(SearchRequest(query: "canal locks", k: 1)).results.first?.documentKey
                == "new/canal.txt"
        )

        // Another process's run (as cron's) holds the lock: 409 lock-held.
        try FileManager.default.createDirectory(at: target.state, withIntermediateDirectories: true)
        let lock = open(target.state.appendingPathComponent("run.lock").path, O_CREAT | O_RDWR, 0o644)
        #expect(flock(lock, LOCK_EX | LOCK_NB) == 0)
        do {
            _ = try await client.startRun()
            Issue.record("a run started while the lock was held")
        } catch let error as SluiceClientError {
            #expect(error.status == 409 && error.code == "lock-held", "\(error)")
        }
        close(lock)
        do {
            _ = try await client.run(id: "nope")
            Issue.record("an unknown run answered")
        } catch let error as SluiceClientError {
            #expect(error.status == 404)
        }
        let result = try await server.stop()
        #expect(result.exitCode == 0, "\(result)")
    }

    @Test("SIGTERM during a run: the child commits what is in flight and stops; serve exits 4, as run does")
    func stopDuringARun() async throws {
        let ws = try Workspace("serve-stop")
        defer { ws.cleanUp() }
        let target = ws.target("t")
        _ = try await Self.indexed(ws, target)
        for index in 0..<20 {
            try Corpus.write(
                "New note \(index) about the mill race. ",
                to: ws.corpus.appendingPathComponent("new/n\(index).txt")
            )
        }
        // The run pauses before it reads new/n0.txt (a debug-build hook) until `resume` exists: the test,
        // not the machine's speed, decides when the signal arrives. One document at a time.
        let resume = ws.file("resume")
        let server = try await ServeProcess.start(
            ws,
            target,
            ["--set", "extract.parallelism=1", "--set", "run.buffer=1"],
            environment: ["SLUICE_DEBUG_PAUSE_READ": "new/n0.txt", "SLUICE_DEBUG_RESUME": resume.path]
        )
        let run = try await server.client().startRun()
        #expect(run.state == "running")
        let paused = await server.process.waitForStderr(
            containing: "sluice-debug: paused at READ",
            timeout: .seconds(120)
        )
        try #require(paused, "\(server.process.stderrSoFar)")
        server.process.send(SIGTERM)
        let signalled = await server.process.waitForStderr(containing: "signal received", timeout: .seconds(600))
        #expect(signalled, "\(server.process.stderrSoFar)")
        _ = FileManager.default.createFile(atPath: resume.path, contents: nil)
        let result = try await server.process.wait(timeout: .seconds(120))
        #expect(result.exitCode == 4, "\(result)")

        // Resuming: a new server's run finishes the rest.
        let again = try await ServeProcess.start(ws, target)
        let client = again.client()
        var second = try await client.startRun()
        let deadline = ContinuousClock.now + .seconds(120)
        while !second.isFinished && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            second = try await client.run(id: second.id)
        }
        #expect(second.outcome == "success", "\(second)")
        #expect(try await client.ready().documents == 24)
        #expect(try await again.stop().exitCode == 0)
    }

    @Test("a bearer token from serve.api_key_env guards all but the probes; the body limit; CORS preflight")
    func safety() async throws {
        let ws = try Workspace("serve-safety")
        defer { ws.cleanUp() }
        let target = ws.target("t")
        _ = try await Self.indexed(ws, target)
        let settings = [
            "--set", "serve.api_key_env=SLUICE_TEST_TOKEN", "--set", "serve.max_body_bytes=200",
            "--set", "serve.cors_origins=[\"https://app.example\"]",
        ]
        let server = try await ServeProcess.start(
            ws,
            target,
            settings,
            environment: ["SLUICE_TEST_TOKEN": "s3cret-token"]
        )
        #expect(try await server.exchange("GET", "/health").status == 200)
        let anonymous = try await server.exchange("POST", "/v1/search", body: Data(#"{"query": "river"}"#.utf8))
        #expect(anonymous.status == 401 && ServeProcess.errorCode(anonymous.body) == "unauthorized")
        let wrong = try await server.exchange("GET", "/v1/documents", headers: ["Authorization": "Bearer s3cret-tokem"])
        #expect(wrong.status == 401)
        #expect(try await server.client(token: "s3cret-token").search(SearchRequest(query: "river")).results.count > 0)

        let big = Data(#"{"query": "\#(String(repeating: "x", count: 400))"}"#.utf8)
        let tooLarge = try await server.exchange(
            "POST",
            "/v1/search",
            body: big,
            headers: ["Authorization": "Bearer s3cret-token"]
        )
        #expect(tooLarge.status == 413 && ServeProcess.errorCode(tooLarge.body) == "too-large")

        let preflight = try await server.exchange(
            "OPTIONS",
            "/v1/search",
            headers: ["Origin": "https://app.example", "Access-Control-Request-Method": "POST"]
        )
        #expect(preflight.status == 204)
        #expect(preflight.headers["access-control-allow-origin"] == "https://app.example")
        let other = try await server.exchange("GET", "/health", headers: ["Origin": "https://evil.example"])
        #expect(other.headers["access-control-allow-origin"] == nil)
        let result = try await server.stop()
        #expect(result.exitCode == 0)
        #expect(!result.stderr.contains("s3cret-token"), "the token was logged")
    }

    @Test("any bind address but loopback without a token is refused (exit 1, with the fix)")
    func refusesAnOpenBind() async throws {
        let ws = try Workspace("serve-open")
        defer { ws.cleanUp() }
        let target = ws.target("t")
        let result = try await ws.sluice(["serve", ws.pipeline.path] + target.arguments + ["--host", "0.0.0.0"])
        #expect(result.exitCode == 1, "\(result)")
        #expect(result.stderr.contains("serve.api_key_env"), "\(result)")
    }
}
