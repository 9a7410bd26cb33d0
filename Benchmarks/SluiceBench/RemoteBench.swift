import ArgumentParser
import Foundation
import SluiceCore
import SluiceHTTP
import SluiceTesting

/// `sluice-bench remote`: Sluice's OpenAI embedder against the stand-in server with a tokens/minute limit
/// and realistic latency, beside a naive fixed-concurrency client sending the same chunks.
///
/// The stand-in's token bucket starts full (a minute's worth) and refills continuously, so over a run of
/// `wall` seconds the limit allows at most `tpm · (1 + wall/60)` tokens: "% of limit" is the share of that
/// the client got accepted. 429s are counted by the server.
struct RemoteBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remote",
        abstract: "Tokens/minute achieved against a rate-limited stand-in, vs. a naive client."
    )

    @Option(help: "The sluice binary.") var sluice = ".build/release/sluice"
    @Option(help: "The corpus folder (see `sluice-bench corpus`).") var corpus: String
    @Option(help: "The stand-in's tokens/minute limit (and Sluice's embed.tpm).") var tpm = 150_000
    @Option(help: "The stand-in's requests/minute limit (and Sluice's embed.rpm).") var rpm = 3_000
    @Option(help: "Fixed latency per request, ms.") var latencyMs = 250.0
    @Option(help: "Added latency per 1,000 tokens, ms.") var latencyPer1kTokensMs = 2.0
    @Option(help: "Sluice's embed.parallelism (the adaptive maximum).") var parallelism = 16
    @Option(help: "Texts per request (both clients).") var batch = 64
    @Option(help: "The naive client's fixed concurrency.") var naiveConcurrency = 8
    @Option(help: "The naive client's fixed wait after a 429, ms.") var naiveRetryMs = 1_000
    @Flag(help: "Skip the naive client.") var skipNaive = false

    struct Row {
        var name: String
        var wall: Double
        var chunks: Int
        var server: [String: Int]
    }

    func run() async throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sluice-bench-remote-\(UInt32.random(in: 0...UInt32.max))"
        )
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let serverArguments = [
            "--tpm", "\(tpm)", "--rpm", "\(rpm)", "--latency-ms", "\(latencyMs)",
            "--latency-per-1k-tokens-ms", "\(latencyPer1kTokensMs)", "--dims", "64",
        ]

        // Sluice.
        let server = try await StandInServer.launch(script: "openai_standin.py", arguments: serverArguments)
        let pipeline = work.appendingPathComponent("pipeline.yaml")
        try """
        source: { path: \(corpus), include: ["**/*"] }
        chunk: { strategy: recursive, max_tokens: 256, overlap_tokens: 32 }
        embed:
          provider: openai
          base_url: \(server.baseURL)/v1
          model: text-embedding-3-small
          dimensions: 64
          batch: \(batch)
          parallelism: \(parallelism)
          tpm: \(tpm)
          rpm: \(rpm)
          linger_ms: 20
        sink: { kind: local, path: \(work.path)/index }
        state: \(work.path)/state
        """.write(to: pipeline, atomically: true, encoding: .utf8)
        let statsFile = work.appendingPathComponent("stats.json")
        let start = Date()
        let status = try runProcess(
            sluice,
            ["run", pipeline.path, "--stats-json", statsFile.path, "--quiet", "--log-level", "warning"]
        )
        let wall = Date().timeIntervalSince(start)
        guard status == 0 || status == 2 else { throw ValidationError("sluice exited with \(status)") }
        let stats = try JSONDecoder().decode(RunStats.self, from: Data(contentsOf: statsFile))
        var rows = [
            Row(
                name: "sluice (budget + AIMD ≤ \(parallelism))",
                wall: wall,
                chunks: stats.chunksEmbedded,
                server: try await serverStats(server)
            )
        ]
        server.stop()
        FileHandle.standardError.write(
            Data("sluice: \(String(format: "%.1f", wall)) s, \(stats.chunksEmbedded) chunks\n".utf8)
        )

        if !skipNaive {
            // The same chunk texts, from the sink, through a naive client against a fresh stand-in.
            let exportFile = work.appendingPathComponent("export.jsonl")
            guard try runProcess(sluice, ["export", pipeline.path], stdout: exportFile) == 0 else {
                throw ValidationError("export failed")
            }
            let texts = try Data(contentsOf: exportFile).split(separator: 0x0A).map {
                try JSONDecoder().decode(VectorRecord.self, from: Data($0)).text
            }
            let distinct = Array(Set(texts)).sorted()
            let naiveServer = try await StandInServer.launch(script: "openai_standin.py", arguments: serverArguments)
            let naiveStart = Date()
            try await naive(distinct, server: naiveServer)
            let naiveWall = Date().timeIntervalSince(naiveStart)
            rows.append(
                Row(
                    name: "naive (fixed \(naiveConcurrency), \(naiveRetryMs) ms after 429)",
                    wall: naiveWall,
                    chunks: distinct.count,
                    server: try await serverStats(naiveServer)
                )
            )
            naiveServer.stop()
        }

        print(
            "TPM limit \(tpm), RPM limit \(rpm), latency \(Int(latencyMs)) ms + \(latencyPer1kTokensMs) ms/1k tokens, batch \(batch)"
        )
        print(
            "client | wall s | chunks | chunks/s | tokens accepted | tokens/min | % of limit | requests | 429s | 429s % of requests"
        )
        print("---|---|---|---|---|---|---|---|---|---")
        for row in rows {
            let tokens = Double(row.server["tokens_ok"] ?? 0)
            let allowed = Double(tpm) * (1 + row.wall / 60)
            let requests = row.server["requests"] ?? 0
            let limited = row.server["rate_limited"] ?? 0
            print(
                "\(row.name) | \(f(row.wall, 1)) | \(row.chunks) | \(f(Double(row.chunks) / row.wall, 1)) | \(Int(tokens)) | \(f(tokens / row.wall * 60, 0)) | \(f(100 * tokens / allowed, 1)) | \(requests) | \(limited) | \(f(requests > 0 ? 100 * Double(limited) / Double(requests) : 0, 2))"
            )
        }
    }

    /// A client without a budget: `naiveConcurrency` workers each send the next batch; after a 429 they
    /// sleep a fixed time and send the same batch again (headers ignored).
    private func naive(_ texts: [String], server: StandInServer) async throws {
        let client = HTTPClient()
        let batches = stride(from: 0, to: texts.count, by: batch).map {
            Array(texts[$0..<min(texts.count, $0 + batch)])
        }
        let next = Counter()
        let url = server.baseURL + "/v1/embeddings"
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<naiveConcurrency {
                group.addTask {
                    while let index = next.take(below: batches.count) {
                        let body = try JSONSerialization.data(withJSONObject: [
                            "model": "text-embedding-3-small", "input": batches[index], "dimensions": 64,
                            "encoding_format": "base64",
                        ])
                        while true {
                            let response = try await client.send(.postJSON(url, body: Array(body)))
                            if response.isSuccess { break }
                            try await Task.sleep(for: .milliseconds(naiveRetryMs))
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    private func serverStats(_ server: StandInServer) async throws -> [String: Int] {
        let response = try await HTTPClient.shared.send(HTTPRequest(url: server.baseURL + "/stats"))
        return (try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Int]) ?? [:]
    }

    private func runProcess(_ path: String, _ arguments: [String], stdout: URL? = nil) throws -> Int32 {
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

    private func f(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }
}
