import ArgumentParser
import Foundation
import SluiceCore

#if canImport(Glibc)
import Glibc
#endif

/// Runs `sluice run` (release build) on corpora with a fresh state each time and prints throughput and
/// the child's peak RSS (from wait4's rusage), median of N repetitions, side by side per corpus; then
/// the per-phase table of the last run of each.
struct PipelineBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pipeline",
        abstract: "Throughput and peak RSS of full runs."
    )

    @Option(help: "The sluice binary.") var sluice = ".build/release/sluice"
    @Option(help: "The pipeline file.") var pipeline = "Pipelines/default.yaml"
    @Option(parsing: .upToNextOption, help: "Corpus folders to compare.") var corpus: [String]
    @Option(help: "Repetitions per corpus (medians are printed).") var repeats = 3
    @Option(parsing: .upToNextOption, help: "Extra --set overrides for every run.") var set: [String] = []

    struct Sample {
        var wall: Double
        /// Peak resident set (wait4's ru_maxrss): heap plus the pages of LMDB's memory map touched.
        var rssMB: Double
        /// Peak anonymous memory (heap, stacks), sampled from /proc every 50 ms.
        var anonMB: Double
        var stats: RunStats
    }

    func run() throws {
        var rows: [(String, [Sample])] = []
        for folder in corpus {
            var samples: [Sample] = []
            for attempt in 1...repeats {
                let sample = try runOnce(corpus: folder)
                FileHandle.standardError.write(
                    Data(
                        "\(folder) run \(attempt): \(String(format: "%.2f", sample.wall)) s, \(String(format: "%.0f", sample.rssMB)) MB RSS, \(String(format: "%.0f", sample.anonMB)) MB anonymous\n"
                            .utf8
                    )
                )
                samples.append(sample)
            }
            rows.append((folder, samples))
        }
        print(
            "corpus | MB | documents | chunks | wall s | documents/s | MB/s | chunks/s | peak RSS MB | peak anonymous MB  (medians of \(repeats))"
        )
        print("---|---|---|---|---|---|---|---|---|---")
        for (folder, samples) in rows {
            let s = samples[0].stats
            let mb = Double(s.bytesRead) / 1_048_576
            let wall = median(samples.map(\.wall))
            let docs = s.documentsUpserted + s.documentsSkipped + s.documentsFailed
            print(
                "\(folder) | \(f(mb, 1)) | \(docs) | \(s.chunks) | \(f(wall, 2)) | \(f(Double(docs) / wall, 1)) | \(f(mb / wall, 2)) | \(f(Double(s.chunks) / wall, 0)) | \(f(median(samples.map(\.rssMB)), 0)) | \(f(median(samples.map(\.anonMB)), 0))"
            )
        }
        if rows.count >= 2 {
            let first = median(rows[0].1.map(\.rssMB))
            let last = median(rows[rows.count - 1].1.map(\.rssMB))
            let firstAnon = median(rows[0].1.map(\.anonMB))
            let lastAnon = median(rows[rows.count - 1].1.map(\.anonMB))
            print(
                "\npeak RSS ratio \(rows[rows.count - 1].0) / \(rows[0].0): \(f(last / first, 2)) · peak anonymous ratio: \(f(lastAnon / firstAnon, 2))"
            )
        }
        for (folder, samples) in rows {
            print("\nphases, \(folder) (last run):\n" + samples[samples.count - 1].stats.table())
        }
    }

    private func runOnce(corpus: String) throws -> Sample {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sluice-bench-\(UInt32.random(in: 0...UInt32.max))"
        )
        defer { try? FileManager.default.removeItem(at: work) }
        let statsFile = work.appendingPathComponent("stats.json").path
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        var arguments = [
            sluice, "run", pipeline, "--source", corpus, "--state", work.appendingPathComponent("state").path,
            "--set", "sink.path=\(work.appendingPathComponent("index").path)", "--set", "source.include=[\"**/*\"]",
            "--stats-json", statsFile, "--quiet", "--log-level", "warning",
        ]
        for s in set { arguments += ["--set", s] }
        let start = Date()
        var pid: pid_t = 0
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let spawned = posix_spawn(&pid, sluice, nil, nil, argv, environ)
        guard spawned == 0 else {
            throw ValidationError("cannot start \(sluice): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        var usage = rusage()
        var peakAnonKB = 0.0
        while true {
            let result = wait4(pid, &status, WNOHANG, &usage)
            if result == pid { break }
            if result < 0 && errno != EINTR { break }
            if let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                let line = text.split(separator: "\n").first(where: { $0.hasPrefix("RssAnon:") }),
                let kb = Double(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
            {
                peakAnonKB = max(peakAnonKB, kb)
            }
            usleep(50_000)
        }
        let wall = Date().timeIntervalSince(start)
        let exit = (status >> 8) & 0xFF
        guard exit == 0 || exit == 2 else { throw ValidationError("sluice exited with \(exit)") }
        let stats = try JSONDecoder().decode(RunStats.self, from: Data(contentsOf: URL(fileURLWithPath: statsFile)))
        return Sample(wall: wall, rssMB: Double(usage.ru_maxrss) / 1024, anonMB: peakAnonKB / 1024, stats: stats)
    }
}
