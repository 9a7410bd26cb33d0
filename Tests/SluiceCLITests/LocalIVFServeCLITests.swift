import Foundation
import SluiceClient
import SluiceCore
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `sluice serve` while a run trains the local store's IVF index on its trainer's thread: the run's trainer is
/// held for good with a part of the lists computed (`SLUICE_DEBUG_IVF_HOLD`, which it reports on stderr: the
/// test waits for that event, never for a duration), the epoch in training recorded and not yet current, and
/// the run's writes done (the state says so). `sluice status` shows the epoch in training, and the server's
/// searches answer as the exact scan does.
@Suite("serve while the IVF index is trained")
struct LocalIVFServeCLITests {
    @Test("serve answers as the exact scan does while a run's trainer is held in the middle of a training")
    func serveDuringTraining() async throws {
        let ws = try Workspace("serve-ivf-training")
        defer { ws.cleanUp() }
        _ = try Corpus.write(count: 24, into: ws.corpus, seed: 0x3F7)
        let main = ws.target("main")
        let settings = LocalIVFCrashCLITests.ivf
        let run = try ws.start(
            ws.runArguments(main, settings),
            environment: ["SLUICE_DEBUG_IVF_HOLD": "part-computed"]
        )
        defer { run.send(SIGKILL) }
        let held = await run.waitForStderr(containing: "the IVF trainer holds at", timeout: .seconds(600))
        try #require(held, "the run's trainer never reached the hold: \(run.stderrSoFar.suffix(2000))")
        // The run's writer goes on meanwhile: wait until the state has every document (the run then waits for
        // its trainer at the end), so that the store no longer changes while the answers are compared.
        let deadline = ContinuousClock.now + .seconds(600)
        var status: [String: Any] = [:]
        while ContinuousClock.now < deadline, run.isRunning {
            let result = try await ws.sluice(["status", "--json", ws.pipeline.path] + main.arguments + settings)
            status = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]) ?? [:]
            if (status["documents_by_status"] as? [String: Int])?["indexed"] == 24 { break }
        }
        try #require((status["documents_by_status"] as? [String: Int])?["indexed"] == 24, "\(status)")
        // `sluice status` reads the index from the store: an epoch in training, none current yet.
        let index = status["store_index"] as? [String: String] ?? [:]
        #expect(index["index"] == "ivf" && index["ivf_training"] != nil, "\(index)")
        #expect(index["ivf_epoch"] == "none (searches scan)", "\(index)")
        let server = try await ServeProcess.start(ws, main, settings)
        for query in LocalIndexCrashCLITests.queries {
            let served = try await server.client().search(SearchRequest(query: query, k: 8, mode: "vector"))
            let result = try await ws.sluice(
                ["search", query, "--json", "-k", "8", "--mode", "vector", ws.pipeline.path] + main.arguments
                    + settings + ["--set", "sink.local_index=exact"]
            )
            #expect(result.exitCode == 0, "\(result)")
            let exact = result.stdout.split(separator: "\n").compactMap { line -> String? in
                guard let hit = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    let score = hit["score"] as? Double
                else { return nil }
                return String(format: "%.4f", score)
            }.sorted()
            #expect(exact.count == 8)
            // Scores only: chunks of identical text have identical vectors, ranked apart by id either way.
            #expect(served.results.map { String(format: "%.4f", $0.score) }.sorted() == exact, "'\(query)'")
        }
        _ = try await server.stop()
        run.send(SIGKILL)
        _ = try await run.wait(timeout: .seconds(120))
    }
}
