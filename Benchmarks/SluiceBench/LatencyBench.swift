import ArgumentParser
import Foundation
import SluiceCore
import SluiceTesting

#if canImport(Glibc)
import Glibc
#endif

/// `sluice-bench latency`: issue 19's latency-bound run. `sluice run` embeds a corpus through the OpenAI
/// embedder against the loopback stand-in (no rate limit; each request answered after a fixed latency plus a
/// latency per token), beside the whole job a user of the OpenAI cookbook's parallel processor does on the same
/// files against a stand-in of its own (`scripts/reference/cookbook_embed_reference.py`: read, chunk with
/// tiktoken to the same token budget, write the request file, run the processor, save the results). Passes
/// alternate which side goes first; the table shows medians and the ratio of the medians.
///
/// Each side's CPU time is its process tree's (`getrusage(RUSAGE_CHILDREN)` around it); the stand-in's own CPU
/// is shown apart. Tokens, requests and texts are counted by the stand-in.
struct LatencyBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "latency",
        abstract: "sluice run vs the OpenAI cookbook's parallel processor, latency-bound (limits that never bind)."
    )

    static let parareqVersion = "0.1.0"
    static let aiohttpVersion = "3.14.5"

    @Option(help: "The sluice binary.") var sluice = ".build/release/sluice"
    @Option(help: "The corpus folder (`sluice-bench corpus --kind doc-files --size-mb 8`).") var corpus: String
    @Option(help: "Passes per side (medians); at least 3.") var repeats = 3
    @Option(help: "The stand-in's fixed latency per request, ms.") var latencyMs = 50.0
    @Option(help: "The stand-in's added latency per 1,000 tokens, ms (0.02 ms per token).")
    var latencyPer1kTokensMs = 20.0
    @Option(help: "Texts per request (both sides).") var batch = 64
    @Option(
        parsing: .upToNextOption,
        help:
            "Sluice's embed.parallelism (requests in flight), one Sluice side each; 0: not set, the provider's default. The processor has no bound."
    )
    var parallelism = [0, 64]
    @Option(help: "Chunk size in cl100k_base tokens (both sides).") var maxTokens = 256
    @Option(help: "Tokens shared by consecutive chunks (both sides).") var overlap = 32
    @Option(help: "The sink of the Sluice side: jsonl (a file, as the processor's results) or local.")
    var sink = "jsonl"
    @Option(help: "shared (one aiohttp session, as the cookbook today) or per-request (parareq as published).")
    var session = "shared"
    @Option(help: "The reference script.") var reference = "scripts/reference/cookbook_embed_reference.py"
    @Option(help: "A pipeline setting for the Sluice side, key=value (repeatable).") var set: [String] = []
    @Flag(help: "Measure Sluice only.") var skipReference = false

    func validate() throws {
        guard repeats >= 3 else { throw ValidationError("--repeats must be at least 3 (medians of 3 or more)") }
        guard ["shared", "per-request"].contains(session) else { throw ValidationError("--session shared|per-request") }
    }

    /// One side's pass.
    struct Pass {
        var wall: Double
        var cpu: Double
        var serverCPU: Double
        var server: [String: Int]
        var detail: String

        var tokens: Double { Double(server["tokens_ok"] ?? 0) }
        var requests: Double { Double(server["requests"] ?? 0) }
        var texts: Double { Double(server["inputs_ok"] ?? 0) }
    }

    func run() async throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-bench-latency-\(getpid())")
        try? FileManager.default.removeItem(at: work)
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        if !skipReference { try Self.installReference() }

        // A side is Sluice at one embed.parallelism, or the cookbook's processor (nil).
        let sides: [Int?] = parallelism.map { $0 } + (skipReference ? [] : [nil])
        var passes: [Int?: [Pass]] = [:]
        for pass in 1...repeats {
            // Alternate the order, so no side always finds the page cache warmer or the machine quieter.
            for side in pass % 2 == 1 ? sides : sides.reversed() {
                let name = side.map { "sluice-p\($0)" } ?? "cookbook"
                let result = try await measure(
                    folder: work.appendingPathComponent("\(name)-\(pass)"),
                    parallelism: side
                )
                passes[side, default: []].append(result)
                FileHandle.standardError.write(Data("pass \(pass) \(name): \(summary(result))\n".utf8))
            }
        }
        print(
            "latency \(f(latencyMs, 0)) ms + \(f(latencyPer1kTokensMs / 1000, 3)) ms/token, no rate limit, batch \(batch), chunks of \(maxTokens) cl100k tokens (overlap \(overlap)), medians of \(repeats)"
        )
        print("side | wall s (min–max) | CPU s | stand-in CPU s | texts sent | tokens sent | requests")
        print("---|---|---|---|---|---|---")
        for p in parallelism { print(row("sluice (embed.parallelism \(label(p)), \(sink) sink)", passes[p]!)) }
        guard let theirs = passes[nil] else { return }
        print(row("cookbook processor (parareq \(Self.parareqVersion), \(session) session)", theirs))
        for p in parallelism {
            let ours = passes[p]!
            let ratios = zip(ours, theirs).map { $1.wall / $0.wall }
            print(
                "cookbook / sluice (parallelism \(label(p))): wall \(f(median(theirs.map(\.wall)) / median(ours.map(\.wall)), 2))× (passes: \(ratios.map { f($0, 2) + "×" }.joined(separator: ", "))), CPU \(f(median(theirs.map(\.cpu)) / median(ours.map(\.cpu)), 2))×"
            )
        }
    }

    /// A side's `embed.parallelism` as the tables print it.
    private func label(_ parallelism: Int) -> String {
        parallelism == 0
            ? "not set: \(PipelineConfiguration.Embed.Provider.openai.defaultParallelism)" : "\(parallelism)"
    }

    private func summary(_ pass: Pass) -> String {
        "\(f(pass.wall, 2)) s, CPU \(f(pass.cpu, 2)) s (stand-in \(f(pass.serverCPU, 2)) s), \(Int(pass.texts)) texts, \(Int(pass.tokens)) tokens, \(Int(pass.requests)) requests\(pass.detail.isEmpty ? "" : "; " + pass.detail)"
    }

    private func row(_ name: String, _ passes: [Pass]) -> String {
        let walls = passes.map(\.wall)
        return
            "\(name) | \(f(median(walls), 2)) (\(f(walls.min()!, 2))–\(f(walls.max()!, 2))) | \(f(median(passes.map(\.cpu)), 2)) | \(f(median(passes.map(\.serverCPU)), 2)) | \(Int(median(passes.map(\.texts)))) | \(Int(median(passes.map(\.tokens)))) | \(Int(median(passes.map(\.requests))))"
    }

    /// One side against a stand-in of its own: wall and CPU time of the side's process tree, then the
    /// stand-in's counters and CPU.
    private func measure(folder: URL, parallelism: Int?) async throws -> Pass {
        let sluiceSide = parallelism != nil
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let server = try await StandInServer.launch(
            script: "openai_standin.py",
            arguments: [
                "--latency-ms", "\(latencyMs)", "--latency-per-1k-tokens-ms", "\(latencyPer1kTokensMs)", "--dims", "64",
            ]
        )
        let program: String
        let arguments: [String]
        if sluiceSide {
            program = sluice
            arguments =
                [
                    "run", try pipeline(baseURL: server.baseURL, work: folder, parallelism: parallelism ?? 1).path,
                    "--quiet", "--log-level", "warning",
                ]
                + set.flatMap { ["--set", $0] }
        } else {
            program = TokenizerBench.python
            arguments = [
                reference, "--corpus", corpus, "--url", server.baseURL + "/v1/embeddings", "--work",
                folder.appendingPathComponent("cookbook").path, "--max-tokens", "\(maxTokens)", "--overlap",
                "\(overlap)",
                "--batch", "\(batch)", "--dimensions", "64", "--session", session,
            ]
        }
        let before = Self.childrenCPU()
        let start = ContinuousClock.now
        // Sluice's summary goes to a log in the pass's folder.
        let log = sluiceSide ? folder.appendingPathComponent("sluice.log") : nil
        let (status, output) = try await Self.runToEnd(program, arguments, log: log)
        let wall = (ContinuousClock.now - start) / .seconds(1)
        let cpu = Self.childrenCPU() - before
        guard status == 0 || (sluiceSide && status == 2) else {
            server.stop()
            throw ValidationError("\(program) exited with \(status): \(output)")
        }
        let stats = try await RemoteBench.serverStats(server)
        let beforeServer = Self.childrenCPU()
        server.stop()
        let serverCPU = Self.childrenCPU() - beforeServer
        var detail = ""
        if !sluiceSide, let object = try? JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any] {
            detail =
                "\(object["files"] ?? "?") files, \(object["chunks"] ?? "?") chunks, \(object["failed"] ?? "?") failed"
        } else if sluiceSide {
            let failed = status == 2 ? "documents failed (exit 2)" : ""
            detail = failed
        }
        return Pass(wall: wall, cpu: cpu, serverCPU: serverCPU, server: stats, detail: detail)
    }

    private func pipeline(baseURL: String, work: URL, parallelism: Int) throws -> URL {
        let file = work.appendingPathComponent("pipeline.yaml")
        let sinkPath =
            sink == "jsonl"
            ? work.appendingPathComponent("vectors.jsonl").path : work.appendingPathComponent("index").path
        // 0: the key is left out, so the provider's default applies.
        let parallelismLine = parallelism == 0 ? "" : "\n  parallelism: \(parallelism)"
        try """
        source: { path: \(corpus), include: ["**/*"] }
        chunk: { strategy: recursive, max_tokens: \(maxTokens), overlap_tokens: \(overlap) }
        embed:
          provider: openai
          base_url: \(baseURL)/v1
          model: text-embedding-3-small
          dimensions: 64
          batch: \(batch)\(parallelismLine)
        sink: { kind: \(sink), path: \(sinkPath) }
        state: \(work.path)/state
        """.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    /// User + system CPU seconds of this process's children that have ended and been waited for.
    static func childrenCPU() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// Runs a process to its end on a thread of its own; returns its exit status and standard output. Its
    /// standard error goes to `log` if given.
    static func runToEnd(_ path: String, _ arguments: [String], log: URL?) async throws -> (Int32, String) {
        if let log { _ = FileManager.default.createFile(atPath: log.path, contents: nil) }
        return try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(
                    with: Result {
                        let process = Process()
                        process.executableURL = URL(fileURLWithPath: path)
                        process.arguments = arguments
                        let output = Pipe()
                        process.standardOutput = output
                        if let log { process.standardError = try FileHandle(forWritingTo: log) }
                        try process.run()
                        let data = output.fileHandleForReading.readDataToEndOfFile()
                        process.waitUntilExit()
                        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
                    }
                )
            }.start()
        }
    }

    /// Installs the pinned parareq (and the aiohttp it imports) into the tools venv unless they are there.
    static func installReference() throws {
        try TokenizerBench.installTiktoken()
        let check =
            "import importlib.metadata as m, sys; sys.exit(m.version('parareq') != '\(parareqVersion)' or m.version('aiohttp') != '\(aiohttpVersion)')"
        if (try? SinkBench.execute(TokenizerBench.python, ["-c", check], [:])) != nil { return }
        print("installing parareq \(parareqVersion) and aiohttp \(aiohttpVersion) into the tools venv")
        _ = try SinkBench.execute(
            TokenizerBench.python,
            [
                "-m", "pip", "install", "-q", "--disable-pip-version-check", "parareq==\(parareqVersion)",
                "aiohttp==\(aiohttpVersion)",
            ],
            [:]
        )
    }
}
