import Foundation
import SluiceCore
import SluiceHTTP
import SluiceTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The fault campaign of issue 14 against the stand-in: poisoned vectors, absurd Retry-After values, a
/// signal during a rate-limit pause.
extension RemoteEmbedderCLITests {
    @Test(
        "a vector that is not finite (base64 NaN, inf, 1e39; JSON 1e39) fails only its document; never cached or stored",
        arguments: [("nan", "base64"), ("inf", "base64"), ("1e39", "base64"), ("1e39", "float")]
    )
    func nonFiniteVectorsFailOnlyTheirDocument(value: String, format: String) async throws {
        let ws = try Workspace("remote-poison")
        defer { ws.cleanUp() }
        let keys = try Corpus.write(count: 10, into: ws.corpus, seed: 0x5EED_0507, maxBytes: 3_000)
        let poisoned = "poison/poisoned.txt"
        try FileManager.default.createDirectory(
            at: ws.corpus.appendingPathComponent("poison"),
            withIntermediateDirectories: true
        )
        try "A short note that carries the POISONMARKER word.\n".write(
            to: ws.corpus.appendingPathComponent(poisoned),
            atomically: true,
            encoding: .utf8
        )
        let server = try await server(["--poison-text", "POISONMARKER", "--poison-value", value])
        let target = ws.target("main")
        // One request for everything: the poisoned input shares its batch with the other documents' chunks.
        let extra =
            settings(server, batch: 256, parallelism: 1) + [
                "--set", "embed.encoding_format=\(format)", "--set", "embed.linger_ms=1000",
            ]
        let first = try await run(ws, target, extra)
        #expect(first.exitCode == 2, "\(first)")
        let status = try await ws.status(target)
        #expect(status.documents["indexed"] == keys.count, "\(status.text)")
        #expect(status.documents["failed"] == 1, "\(status.text)")
        #expect(status.failures[poisoned]?.contains("not finite") == true, "\(status.text)")
        let records = try Export.records(try await ws.export(target))
        #expect(Set(records.map(\.documentKey)) == Set(keys))
        #expect(records.allSatisfy { $0.vector.allSatisfy(\.isFinite) })
        // Not cached: the next run asks the provider again, and fails the document again.
        let again = try await run(ws, target, extra)
        #expect(again.exitCode == 2, "\(again)")
        #expect(try await Self.serverStats(server)["poisoned"] == 2, "the poisoned vector was cached")
    }

    @Test(
        "a 429 asking for an absurd wait (Retry-After 1e20 or inf, retry-after-ms 1e30) is capped, not a crash",
        arguments: [["--retry-after", "1e20"], ["--retry-after", "inf"], ["--retry-after-ms", "1e30"]]
    )
    func absurdRetryAfterIsCapped(header: [String]) async throws {
        let ws = try Workspace("remote-retry-after")
        defer { ws.cleanUp() }
        let keys = try Corpus.write(count: 4, into: ws.corpus, seed: 0x5EED_0508, maxBytes: 3_000)
        let server = try await server(["--storm", "2"] + header)
        let target = ws.target("main")
        let result = try await run(ws, target, settings(server) + ["--set", "embed.max_retry_after_seconds=1"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(try await Self.serverStats(server)["rate_limited"] == 2)
        #expect(try await ws.status(target).documents == ["indexed": keys.count])
    }

    @Test("the first SIGTERM cuts a rate-limit pause (Retry-After: 3600): the run commits, exits 4, and resumes")
    func signalCutsARateLimitPause() async throws {
        let ws = try Workspace("remote-sigterm-pause")
        defer { ws.cleanUp() }
        let keys = try Corpus.write(count: 6, into: ws.corpus, seed: 0x5EED_0509, maxBytes: 4_000)
        let storm = try await server(["--storm", "1000000", "--retry-after", "3600"])
        let target = ws.target("main")
        let statsURL = ws.file("interrupted.stats.json")
        let process = try ws.start(
            ws.runArguments(target, settings(storm) + ["--stats-json", statsURL.path]),
            environment: [Self.keyVariable: key]
        )
        let deadline = ContinuousClock.now + .seconds(120)
        while (try await Self.serverStats(storm)["rate_limited"] ?? 0) < 1, ContinuousClock.now < deadline,
            process.isRunning
        {
            try await Task.sleep(for: .milliseconds(20))
        }
        try #require(process.isRunning, "the run ended before the signal: \(process.stderrSoFar)")
        process.send(SIGTERM)
        // The pause is an hour (or the cap on it, minutes): only a cut wait ends within a minute.
        let result = try await process.wait(timeout: .seconds(60))
        #expect(result.exitCode == 4, "\(result)")
        #expect(result.stderr.contains("signal received"), "\(result)")
        let stats = try ws.stats(statsURL)
        #expect(stats.decoded.interrupted)
        #expect(stats["documents_failed"] == 0, "a cut wait is not the documents' fault")
        #expect(try await ws.status(target).documents["failed"] == nil)

        let good = try await server()
        let resumed = try await run(ws, target, settings(good))
        #expect(resumed.exitCode == 0, "\(resumed)")
        #expect(try await ws.status(target).documents == ["indexed": keys.count])
    }

    @Test("SIGINT with every document in flight (the scan over, no wait to cut): exit 4, and a re-run converges")
    func signalWithEveryDocumentInFlightExitsFour() async throws {
        let ws = try Workspace("remote-sigint-in-flight")
        defer { ws.cleanUp() }
        let keys = try Corpus.write(count: 6, into: ws.corpus, seed: 0x5EED_050A, maxBytes: 3_000)
        let server = try await server()
        // Every chunk in one or a few requests, all sent at once, none timed out while held.
        let extra =
            settings(server, batch: 256, parallelism: 8) + [
                "--set", "embed.timeout_seconds=600", "--set", "embed.linger_ms=200",
            ]
        let reference = ws.target("reference")
        let first = try await run(ws, reference, extra)
        try #require(first.exitCode == 0, "\(first)")
        let expected = try await ws.export(reference)
        let inputs = try #require(try await Self.serverStats(server)["inputs_ok"])

        try await control(server, #"{"hold": true, "reset_counters": true}"#)
        let target = ws.target("main")
        let statsURL = ws.file("interrupted.stats.json")
        let process = try ws.start(
            ws.runArguments(target, extra + ["--stats-json", statsURL.path]),
            environment: [Self.keyVariable: key]
        )
        // Every document's chunks are at the provider, unanswered: the scan is over and nothing is committed.
        let deadline = ContinuousClock.now + .seconds(120)
        while (try await Self.serverStats(server)["held_inputs"] ?? 0) < inputs, process.isRunning,
            ContinuousClock.now < deadline
        {
            try await Task.sleep(for: .milliseconds(20))
        }
        try #require(process.isRunning, "the run ended before the signal: \(process.stderrSoFar)")
        #expect(try await Self.serverStats(server)["held_inputs"] == inputs)
        process.send(SIGINT)
        let seen = await process.waitForStderr(containing: "signal received", timeout: .seconds(600))
        try #require(seen, "\(process.stderrSoFar)")
        try await control(server, #"{"hold": false}"#)
        let result = try await process.wait(timeout: .seconds(120))
        #expect(result.exitCode == 4, "\(result)")
        let stats = try ws.stats(statsURL)
        #expect(stats.decoded.interrupted)
        // What was in flight finished and was committed.
        #expect(stats["documents_upserted"] == keys.count)
        #expect(stats["documents_failed"] == 0)

        let resumed = try await run(ws, target, extra)
        #expect(resumed.exitCode == 0, "\(resumed)")
        expectSameExport(try await ws.export(target), expected, "re-run after SIGINT with every document in flight")
        #expect(try await ws.status(target).documents == ["indexed": keys.count])
    }

    /// Changes the stand-in's faults and limits at run time (its `POST /control`).
    func control(_ server: StandInServer, _ body: String) async throws {
        let response = try await HTTPClient.shared.send(
            .postJSON(server.baseURL + "/control", body: Array(body.utf8))
        )
        #expect(response.status == 200, "\(response)")
    }
}
