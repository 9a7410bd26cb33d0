import Foundation
import SluiceCore
import SluiceHTTP
import SluiceTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The `sluice` executable with `embed.provider: openai` against the stand-in server
/// (Sources/SluiceTesting/StandIns/openai_standin.py): faults, quota exhaustion and resume, secrets, caching, kill -9.
@Suite(.serialized)
struct RemoteEmbedderCLITests {
    static let keyVariable = "SLUICE_TEST_OPENAI_KEY"

    /// A key that appears nowhere but in the environment and the stand-in's memory.
    let key = "sk-test-\(UUID().uuidString.lowercased())-secret"

    func settings(_ server: StandInServer, batch: Int = 16, parallelism: Int = 4, extra: [String] = []) -> [String] {
        [
            "--set", "embed.provider=openai", "--set", "embed.base_url=\(server.baseURL)/v1",
            "--set", "embed.model=text-embedding-3-small", "--set", "embed.dimensions=32",
            "--set", "embed.api_key_env=\(Self.keyVariable)", "--set", "embed.batch=\(batch)",
            "--set", "embed.parallelism=\(parallelism)", "--set", "embed.timeout_seconds=2",
            "--set", "embed.max_retries=20",
        ] + extra
    }

    func server(_ arguments: [String] = []) async throws -> StandInServer {
        try await StandInServer.launch(
            script: "openai_standin.py",
            arguments: ["--api-key", key, "--dims", "32"] + arguments
        )
    }

    func run(
        _ ws: Workspace,
        _ target: Workspace.Target,
        _ extra: [String],
        key: String? = nil,
        timeout: Duration = .seconds(120)
    ) async throws -> CommandResult {
        try await ws.sluice(
            ws.runArguments(target, extra),
            environment: [Self.keyVariable: key ?? self.key],
            timeout: timeout
        )
    }

    static func serverStats(_ server: StandInServer) async throws -> [String: Int] {
        let response = try await HTTPClient.shared.send(HTTPRequest(url: server.baseURL + "/stats"))
        return try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Int])
    }

    /// A fault-free run of the corpus: the export every faulty run must equal.
    func reference(_ ws: Workspace) async throws -> Data {
        let server = try await server()
        let target = ws.target("reference")
        let result = try await run(ws, target, settings(server))
        try #require(result.exitCode == 0, "\(result)")
        return try await ws.export(target)
    }

    @Test("5xx, resets, slow answers, 429 storms and oversized batches: no chunk lost or duplicated")
    func faultsLoseNothing() async throws {
        let ws = try Workspace("remote-faults")
        defer { ws.cleanUp() }
        try Corpus.write(count: 40, into: ws.corpus, seed: 0x5EED_0501, maxBytes: 8_000)
        let expected = try await reference(ws)
        let faulty = try await server([
            "--error-rate", "0.15", "--reset-rate", "0.05", "--slow-rate", "0.05", "--slow-ms", "4000",
            "--storm", "8", "--max-inputs", "10", "--seed", "11",
        ])
        let target = ws.target("faulty")
        let statsURL = ws.file("faulty.stats.json")
        let result = try await run(ws, target, settings(faulty, batch: 32) + ["--stats-json", statsURL.path])
        #expect(result.exitCode == 0, "\(result)")
        expectSameExport(try await ws.export(target), expected, "run under faults")
        let server = try await Self.serverStats(faulty)
        #expect(
            (server["server_errors"] ?? 0) > 0 && (server["rate_limited"] ?? 0) >= 8 && (server["too_large"] ?? 0) > 0,
            "\(server)"
        )
        let stats = try ws.stats(statsURL)
        #expect((stats["embed_retries"] ?? 0) > 0)
        // Not all 8 of the server's 429s reach the client: an answer after a slow fault may come after the
        // client's timeout.
        #expect((stats["rate_limited"] ?? 0) > 0)
        #expect(stats["documents_failed"] == 0)
    }

    @Test("quota exhaustion stops the run with exit 5, keeps what was done, and the next run resumes")
    func quotaExhaustionExitsFiveAndResumes() async throws {
        let ws = try Workspace("remote-quota")
        defer { ws.cleanUp() }
        let keys = try Corpus.write(count: 40, into: ws.corpus, seed: 0x5EED_0502, maxBytes: 8_000)
        let expected = try await reference(ws)
        let stingy = try await server(["--quota-after", "4"])
        let target = ws.target("quota")
        let statsURL = ws.file("quota.stats.json")
        let first = try await run(
            ws,
            target,
            settings(stingy, batch: 8, parallelism: 2) + ["--stats-json", statsURL.path]
        )
        #expect(first.exitCode == 5, "\(first)")
        #expect(first.stderr.contains("insufficient_quota"), "\(first)")
        #expect(first.stderr.contains("run again"), "\(first)")
        let stats = try ws.stats(statsURL)
        #expect(stats["documents_failed"] == 0, "a refusal is not the documents' fault")
        #expect(stats.decoded.providerRefusal != nil)
        let requestsAtRefusal = try await Self.serverStats(stingy)["requests"] ?? 0
        #expect(requestsAtRefusal <= 4 + 2 + 2, "the run kept sending after the refusal: \(requestsAtRefusal) requests")
        let partial = try await ws.status(target)
        #expect((partial.documents["indexed"] ?? 0) < keys.count)
        #expect(partial.documents["failed"] == nil)

        // Fixed (a provider with quota): the same command resumes and ends where a clean run ends.
        let generous = try await server()
        let second = try await run(ws, target, settings(generous))
        #expect(second.exitCode == 0, "\(second)")
        expectSameExport(try await ws.export(target), expected, "resumed after quota exhaustion")
        #expect(try await ws.status(target).documents == ["indexed": keys.count])
    }

    @Test("the API key never appears in output, logs, stats, checkpoints, the sink or --help")
    func keyNeverAppears() async throws {
        let ws = try Workspace("remote-secret")
        defer { ws.cleanUp() }
        try Corpus.write(count: 12, into: ws.corpus, seed: 0x5EED_0503, maxBytes: 6_000)
        let server = try await server(["--error-rate", "0.1", "--storm", "2"])
        let target = ws.target("main")
        let ok = try await run(
            ws,
            target,
            settings(server) + ["--stats-json", ws.file("ok.stats.json").path, "--log-level", "debug"]
        )
        #expect(ok.exitCode == 0, "\(ok)")
        // A rejected key: the message must not show the one that was sent.
        let other = ws.target("rejected")
        let rejected = try await run(
            ws,
            other,
            settings(server) + ["--stats-json", ws.file("rejected.stats.json").path],
            key: key + "-wrong"
        )
        #expect(rejected.exitCode == 5, "\(rejected)")
        _ = try await ws.status(target)
        _ = try await ws.export(target)
        let help = try await ws.sluice(["run", "--help"], environment: [Self.keyVariable: key])
        #expect(!help.stdout.contains(key) && !help.stderr.contains(key))

        // Every file the runs left behind: outputs, stats JSON, LMDB state, the local sink.
        var scanned = 0
        let enumerator = FileManager.default.enumerator(at: ws.root, includingPropertiesForKeys: [.isRegularFileKey])
        while let url = enumerator?.nextObject() as? URL {
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true else { continue }
            let data = try Data(contentsOf: url)
            scanned += 1
            #expect(data.range(of: Data(key.utf8)) == nil, "the key is in \(url.path)")
            #expect(data.range(of: Data((key + "-wrong").utf8)) == nil, "the rejected key is in \(url.path)")
        }
        #expect(scanned > 10)
    }

    @Test("a re-run of an unchanged corpus sends no request, even after every mtime changed")
    func unchangedRerunSendsNothing() async throws {
        let ws = try Workspace("remote-rerun")
        defer { ws.cleanUp() }
        let keys = try Corpus.write(count: 20, into: ws.corpus, seed: 0x5EED_0504, maxBytes: 6_000)
        let server = try await server()
        let target = ws.target("main")
        #expect(try await run(ws, target, settings(server)).exitCode == 0)
        let before = try await Self.serverStats(server)
        let statsURL = ws.file("rerun.stats.json")
        let again = try await run(ws, target, settings(server) + ["--stats-json", statsURL.path])
        #expect(again.exitCode == 0, "\(again)")
        #expect(
            try await Self.serverStats(server)["requests"] == before["requests"],
            "the unchanged re-run sent requests"
        )
        #expect(try ws.stats(statsURL)["embed_requests"] == 0)

        // Every mtime changed, bytes the same: read and hashed, still nothing sent.
        for key in keys { try touch(ws.corpus.appendingPathComponent(key)) }
        #expect(try await run(ws, target, settings(server)).exitCode == 0)
        #expect(try await Self.serverStats(server)["requests"] == before["requests"])
    }

    @Test("kill -9 mid-run: the resumed run re-sends at most what was in flight")
    func killResendsAtMostInFlight() async throws {
        let ws = try Workspace("remote-kill")
        defer { ws.cleanUp() }
        try Corpus.write(count: 60, into: ws.corpus, seed: 0x5EED_0505, maxBytes: 8_000)
        let batch = 8
        let parallelism = 2
        let server = try await server(["--latency-ms", "150"])
        let target = ws.target("main")
        // The suite's 2-second request limit would let the killed run time out its held requests and send them
        // again (each retry held too, and answered once the hold is lifted, to a dead socket): 24 re-sent with a
        // 3-second pause before the kill. A retry is not a re-send after a kill; this test counts only those.
        let patient = ["--set", "embed.timeout_seconds=600"]
        let arguments = ws.runArguments(
            target,
            settings(server, batch: batch, parallelism: parallelism, extra: patient)
        )
        // Kill once a few batches are done, with requests in flight: past 6 answers the stand-in itself holds
        // the next requests unanswered, so the run cannot end before the kill however slowly this test polls
        // (a loaded machine let the run finish first, twice: once when the test only polled, once when the
        // test turned the hold on after it saw 6 answers).
        try await control(server, #"{"hold_after": 6}"#)
        let process = try ws.start(arguments, environment: [Self.keyVariable: key])
        let deadline = ContinuousClock.now + .seconds(60)
        while (try await Self.serverStats(server)["held_inputs"] ?? 0) == 0, ContinuousClock.now < deadline,
            process.isRunning
        {
            try await Task.sleep(for: .milliseconds(20))
        }
        // An answer the run has received but not yet written to its embedding cache is in flight too, beside the
        // held requests: kill once every answered input is in the cache (the held requests get no answer, so the
        // count stays).
        let answered = try await Self.serverStats(server)["inputs_ok"] ?? 0
        while process.isRunning, ContinuousClock.now < deadline,
            ((try? await ws.status(target).cacheCount).flatMap({ $0 }) ?? 0) < answered
        {
            try await Task.sleep(for: .milliseconds(50))
        }
        process.send(SIGKILL)
        let killed = try await process.wait(timeout: .seconds(30))
        try await control(server, #"{"hold_after": 0}"#)
        try #require(killed.signaled, "the run ended before the kill: \(killed)")
        let held = try await Self.serverStats(server)["held_inputs"] ?? 0
        let resumed = try await run(
            ws,
            target,
            settings(server, batch: batch, parallelism: parallelism, extra: patient)
        )
        #expect(resumed.exitCode == 0, "\(resumed)")
        let embeddedInputs = try await Self.serverStats(server)["inputs_ok"] ?? 0
        let distinct = try #require(try await ws.status(target).cacheCount)
        let resent = embeddedInputs - distinct
        #expect(resent >= 0)
        #expect(
            resent <= batch * parallelism,
            "\(resent) chunks embedded twice after one kill (in flight at most \(batch * parallelism); held \(held))"
        )
        print(
            "killResendsAtMostInFlight: \(embeddedInputs) inputs embedded for \(distinct) distinct chunks; re-sent \(resent)"
        )
    }
}

extension RemoteEmbedderCLITests {
    @Test("http_proxy is honoured: a run against an unresolvable host goes through the proxy")
    func proxyEnvironmentIsHonoured() async throws {
        let ws = try Workspace("remote-proxy")
        defer { ws.cleanUp() }
        try Corpus.write(count: 4, into: ws.corpus, seed: 0x5EED_0506, maxBytes: 4_000)
        // The stand-in understands absolute-form request targets, so it can stand in for a proxy too.
        let proxy = try await server()
        var arguments = settings(proxy)
        arguments += ["--set", "embed.base_url=http://embeddings.invalid/v1"]
        let result = try await ws.sluice(
            ws.runArguments(ws.target("main"), arguments),
            environment: [Self.keyVariable: key, "http_proxy": proxy.baseURL, "no_proxy": "", "NO_PROXY": ""],
            timeout: .seconds(120)
        )
        #expect(result.exitCode == 0, "\(result)")
        #expect((try await Self.serverStats(proxy)["ok"] ?? 0) > 0)
    }
}
