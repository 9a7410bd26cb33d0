import ArgumentParser
import Foundation
import SluiceCore
import SluiceHTTP
import SluiceTesting

/// `sluice-bench remote`: Sluice's OpenAI embedder against the stand-in server with a tokens/minute limit
/// and realistic latency, beside a naive fixed-concurrency client sending the same chunks, in three
/// scenarios: `steady` (a full bucket at the start), `faults` (2% 5xx and 2% connection resets) and
/// `drained` (a restart against a bucket another run emptied).
///
/// "% of attainable" is measured by the server: the tokens it accepted, as a share of what its token
/// bucket would have admitted between the client's first request and the admission of its last accepted
/// one (the bucket's level when the first request arrived plus `tpm/60` per second). A client that idles
/// while the bucket is full, or leaves it unused, scores below 100%; process start-up and chunking before
/// the first request are not counted. 429s are counted by the server. Each pass runs Sluice and the naive client
/// at the same time, each against its own stand-in.
struct RemoteBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remote",
        abstract: "Tokens/minute achieved against a rate-limited stand-in, vs. a naive client."
    )

    enum Scenario: String, ExpressibleByArgument, CaseIterable {
        case steady, faults, drained
    }

    @Option(help: "The sluice binary.") var sluice = ".build/release/sluice"
    @Option(help: "The corpus folder (see `sluice-bench corpus`).") var corpus: String
    @Option(help: "The stand-in's tokens/minute limit (and Sluice's embed.tpm).") var tpm = 150_000
    @Option(help: "The stand-in's requests/minute limit (and Sluice's embed.rpm).") var rpm = 3_000
    @Option(help: "Fixed latency per request, ms.") var latencyMs = 250.0
    @Option(help: "Added latency per 1,000 tokens, ms.") var latencyPer1kTokensMs = 2.0
    @Option(help: "Sluice's embed.parallelism (the adaptive maximum).") var parallelism = 16
    @Option(help: "Texts per request (both clients).") var batch = 64
    @Option(help: "The naive client's fixed concurrency.") var naiveConcurrency = 8
    @Option(help: "The naive client's fixed wait after a 429 or a failure, ms.") var naiveRetryMs = 1_000
    @Option(help: "A scenario to run: steady, faults or drained (repeat the option; default: all three).")
    var scenario: [Scenario] = []
    @Option(help: "Passes per scenario (the table shows medians).") var repeats = 1
    @Option(help: "The faults scenario's share of requests answered 500/502/503.") var errorRate = 0.02
    @Option(help: "The faults scenario's share of requests whose connection is reset.") var resetRate = 0.02
    @Flag(help: "Skip the naive client.") var skipNaive = false

    /// One client's pass, as the server counted it.
    struct Pass {
        var wall: Double
        var server: [String: Int]

        var tokens: Double { Double(server["tokens_ok"] ?? 0) }
        var requests: Double { Double(server["requests"] ?? 0) }
        var rateLimited: Double { Double(server["rate_limited"] ?? 0) }
        var failed: Double { Double((server["server_errors"] ?? 0) + (server["resets"] ?? 0)) }

        /// What the bucket would have admitted between the first request and the last accepted admission.
        func attainable(tpm: Int) -> Double {
            let window = Double(max(0, (server["last_ok_admission_ms"] ?? 0) - (server["first_request_ms"] ?? 0)))
            return Double(server["start_tokens"] ?? tpm) + Double(tpm) * window / 60_000
        }
    }

    func run() async throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sluice-bench-remote-\(UInt32.random(in: 0...UInt32.max))"
        )
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let scenarios = scenario.isEmpty ? Scenario.allCases : scenario

        // The chunk texts for the naive client: one run without limits, exported from its sink.
        let texts = try await chunkTexts(work: work.appendingPathComponent("prepare"))
        FileHandle.standardError.write(Data("\(texts.count) distinct chunks\n".utf8))

        var tables: [String] = []
        for scenario in scenarios {
            var sluicePasses: [Pass] = []
            var naivePasses: [Pass] = []
            for pass in 1...max(1, repeats) {
                let folder = work.appendingPathComponent("\(scenario.rawValue)-\(pass)")
                async let sluiceRun = runSluice(scenario: scenario, work: folder)
                async let naiveRun = runNaive(texts, scenario: scenario)
                let (ours, theirs) = try await (sluiceRun, naiveRun)
                sluicePasses.append(ours)
                if let theirs { naivePasses.append(theirs) }
                let line =
                    "\(scenario.rawValue) pass \(pass): sluice \(summary(ours))"
                    + (theirs.map { "; naive \(summary($0))" } ?? "")
                FileHandle.standardError.write(Data((line + "\n").utf8))
            }
            tables.append(table(scenario: scenario, sluice: sluicePasses, naive: naivePasses))
        }
        print(
            "TPM limit \(tpm), RPM limit \(rpm), latency \(Int(latencyMs)) ms + \(latencyPer1kTokensMs) ms/1k tokens, batch \(batch), \(texts.count) chunks, medians of \(max(1, repeats))"
        )
        print(tables.joined(separator: "\n"))
    }

    private func summary(_ pass: Pass) -> String {
        "\(f(100 * pass.tokens / pass.attainable(tpm: tpm), 2))% of attainable, \(Int(pass.requests)) requests, \(Int(pass.rateLimited)) 429s"
    }

    private func serverArguments(_ scenario: Scenario) -> [String] {
        var arguments = [
            "--tpm", "\(tpm)", "--rpm", "\(rpm)", "--latency-ms", "\(latencyMs)",
            "--latency-per-1k-tokens-ms", "\(latencyPer1kTokensMs)", "--dims", "64",
        ]
        switch scenario {
        case .steady: break
        case .faults: arguments += ["--error-rate", "\(errorRate)", "--reset-rate", "\(resetRate)"]
        case .drained: arguments += ["--start-level", "0"]
        }
        return arguments
    }

    private func pipeline(baseURL: String, work: URL, limited: Bool) throws -> URL {
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let file = work.appendingPathComponent("pipeline.yaml")
        try """
        source: { path: \(corpus), include: ["**/*"] }
        chunk: { strategy: recursive, max_tokens: 256, overlap_tokens: 32 }
        embed:
          provider: openai
          base_url: \(baseURL)/v1
          model: text-embedding-3-small
          dimensions: 64
          batch: \(batch)
          parallelism: \(parallelism)
        \(limited ? "  tpm: \(tpm)\n  rpm: \(rpm)\n" : "")  linger_ms: 20
        sink: { kind: local, path: \(work.path)/index }
        state: \(work.path)/state
        """.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    private func chunkTexts(work: URL) async throws -> [String] {
        let server = try await StandInServer.launch(script: "openai_standin.py", arguments: ["--dims", "64"])
        defer { server.stop() }
        let file = try pipeline(baseURL: server.baseURL, work: work, limited: false)
        let status = try await runProcess(sluice, ["run", file.path, "--quiet", "--log-level", "warning"])
        guard status == 0 || status == 2 else { throw ValidationError("sluice exited with \(status)") }
        let exportFile = work.appendingPathComponent("export.jsonl")
        guard try await runProcess(sluice, ["export", file.path], stdout: exportFile) == 0 else {
            throw ValidationError("export failed")
        }
        let texts = try Data(contentsOf: exportFile).split(separator: 0x0A).map {
            try JSONDecoder().decode(VectorRecord.self, from: Data($0)).text
        }
        return Array(Set(texts)).sorted()
    }

    private func runSluice(scenario: Scenario, work: URL) async throws -> Pass {
        let server = try await StandInServer.launch(script: "openai_standin.py", arguments: serverArguments(scenario))
        defer { server.stop() }
        let file = try pipeline(baseURL: server.baseURL, work: work, limited: true)
        let start = Date()
        let status = try await runProcess(sluice, ["run", file.path, "--quiet", "--log-level", "warning"])
        let wall = Date().timeIntervalSince(start)
        guard status == 0 || status == 2 else { throw ValidationError("sluice exited with \(status)") }
        return Pass(wall: wall, server: try await Self.serverStats(server))
    }

    private func runNaive(_ texts: [String], scenario: Scenario) async throws -> Pass? {
        if skipNaive { return nil }
        let server = try await StandInServer.launch(script: "openai_standin.py", arguments: serverArguments(scenario))
        defer { server.stop() }
        let start = Date()
        try await NaiveEmbeddingClient(concurrency: naiveConcurrency, retryMs: naiveRetryMs, batch: batch)
            .send(texts, to: server.baseURL + "/v1/embeddings")
        return Pass(wall: Date().timeIntervalSince(start), server: try await Self.serverStats(server))
    }

    private func table(scenario: Scenario, sluice: [Pass], naive: [Pass]) -> String {
        var lines = [
            "",
            "scenario \(scenario.rawValue)\(scenario == .faults ? " (\(f(100 * errorRate, 0))% 5xx, \(f(100 * resetRate, 0))% resets)" : scenario == .drained ? " (the bucket empty at the start)" : " (the bucket full at the start)")",
            "client | wall s | tokens accepted | % of attainable (min–max) | requests | 5xx + resets | 429s | 429s % of requests",
            "---|---|---|---|---|---|---|---",
        ]
        for (name, passes) in [
            ("sluice (budget + AIMD ≤ \(parallelism))", sluice),
            ("naive (fixed \(naiveConcurrency), \(naiveRetryMs) ms after 429)", naive),
        ] where !passes.isEmpty {
            let shares = passes.map { 100 * $0.tokens / $0.attainable(tpm: tpm) }
            let limitedShare = passes.map { $0.requests > 0 ? 100 * $0.rateLimited / $0.requests : 0 }
            lines.append(
                "\(name) | \(f(median(passes.map(\.wall)), 1)) | \(Int(median(passes.map(\.tokens)))) | \(f(median(shares), 2)) (\(f(shares.min()!, 2))–\(f(shares.max()!, 2))) | \(f(median(passes.map(\.requests)), 0)) | \(f(median(passes.map(\.failed)), 0)) | \(f(median(passes.map(\.rateLimited)), 0)) | \(f(median(limitedShare), 2))"
            )
        }
        return lines.joined(separator: "\n")
    }

    /// The stand-in's counters (`GET /stats`).
    static func serverStats(_ server: StandInServer) async throws -> [String: Int] {
        let response = try await HTTPClient.shared.send(HTTPRequest(url: server.baseURL + "/stats"))
        return (try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Int]) ?? [:]
    }

    /// Runs a process to its end on a thread of its own (not on the cooperative pool, which the naive
    /// client running at the same time needs).
    private func runProcess(_ path: String, _ arguments: [String], stdout: URL? = nil) async throws -> Int32 {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(
                    with: Result {
                        let process = Process()
                        process.executableURL = URL(fileURLWithPath: path)
                        process.arguments = arguments
                        if let stdout {
                            _ = FileManager.default.createFile(atPath: stdout.path, contents: nil)
                            process.standardOutput = try FileHandle(forWritingTo: stdout)
                        }
                        try process.run()
                        process.waitUntilExit()
                        return process.terminationStatus
                    }
                )
            }.start()
        }
    }
}
