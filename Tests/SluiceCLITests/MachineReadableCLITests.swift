import Foundation
import Testing

/// Machine-readable operations (issue 18, item 5): `status --json`, `verify --json`, `--log-format json`,
/// the progress figures in plain log lines, and `--quiet`. Nothing here depends on timing: the plain
/// progress line checked is the one every run logs at its end.
@Suite(.serialized)
struct MachineReadableCLITests {
    /// A name with control characters: JSON must carry it back exactly, and never raw.
    static let hostile = "bad\u{1B}[31m\nname\u{9B}.txt"

    static func json(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
        return try #require(object as? [String: Any], "not a JSON object: \(text)", sourceLocation: sourceLocation)
    }

    @Test(
        "status --json: documents by status, caches, the last runs with their outcome and stats, failures with code and reason"
    )
    func statusJSON() async throws {
        let ws = try Workspace("status-json")
        defer { ws.cleanUp() }
        let keys = try Corpus.write(count: 5, into: ws.corpus, seed: 0x5EED_0501)
        try Corpus.write("", to: ws.corpus.appendingPathComponent(Self.hostile))  // empty: it fails
        let main = ws.target("main")
        try await ws.run(main, expecting: 2)

        let result = try await ws.sluice(["status", ws.pipeline.path, "--json"] + main.arguments)
        #expect(result.exitCode == 0, "\(result)")
        let status = try Self.json(result.stdout)
        #expect(
            Set(status.keys) == [
                "state_directory", "checkpoint", "embedder", "pending_sink_reset", "documents_by_status", "documents",
                "vectors_tracked",
                "embedding_cache_entries", "extraction_cache", "recent_runs", "failures", "store_index", "store_map",
            ]
        )
        #expect(status["checkpoint"] as? Bool == true)
        // The local store's index, read from the store (the default: the graph).
        #expect(
            status["store_index"] as? [String: String] == [
                "index": "hnsw", "hnsw_nodes": "memory", "hnsw_graph": "below_exact_below",
                "hnsw_exact_below": "10000",
            ]
        )
        #expect(status["documents_by_status"] as? [String: Int] == ["indexed": keys.count, "failed": 1])
        #expect(status["documents"] as? Int == keys.count + 1)
        #expect((status["vectors_tracked"] as? Int ?? 0) > 0)
        #expect((status["embedding_cache_entries"] as? Int ?? 0) > 0)
        #expect(status["pending_sink_reset"] is NSNull)
        #expect(status["embedder"] is String)
        let cache = try #require(status["extraction_cache"] as? [String: Any])
        #expect(Set(cache.keys) == ["entries", "bytes", "cap_mb"])

        let runs = try #require(status["recent_runs"] as? [[String: Any]])
        try #require(runs.count == 1, "\(runs)")
        #expect(runs[0]["exit_code"] as? Int == 2)
        #expect(runs[0]["outcome"] as? String == "documents_failed")
        #expect(runs[0]["failure"] is NSNull)
        #expect(runs[0]["run_id"] is String)
        let stats = try #require(runs[0]["stats"] as? [String: Any], "a finished run carries its --stats-json document")
        #expect(stats["documents_upserted"] as? Int == keys.count)
        #expect(stats["documents_failed"] as? Int == 1)
        #expect(stats["run_id"] as? String == runs[0]["run_id"] as? String)

        let failures = try #require(status["failures"] as? [[String: Any]])
        try #require(failures.count == 1, "\(failures)")
        #expect(failures[0]["document_key"] as? String == Self.hostile, "the real key, escaped only as JSON requires")
        #expect(failures[0]["code"] as? String == "empty-document")
        #expect(failures[0]["reason"] is String)
        #expect(failures[0]["removed_vectors"] is NSNull)
        #expect(failures[0]["known"] as? Bool == true, "an empty file is a known failure (docs/DESIGN.md §11)")
        #expect(
            !result.stdout.contains("\u{1B}") && !result.stdout.contains("\u{9B}"),
            "no raw control character: \(result.stdout)"
        )
    }

    @Test("run --metrics-file: the Prometheus textfile of the last run, also when it fails; the last success kept")
    func metricsFile() async throws {
        let ws = try Workspace("metrics-file")
        defer { ws.cleanUp() }
        let keys = try Corpus.write(count: 4, into: ws.corpus, seed: 0x5EED_0504)
        let main = ws.target("main")
        let metrics = ws.file("sluice.prom")
        func sample(_ text: String, _ name: String, _ labels: String = "") -> Double? {
            let prefix = "\(name){pipeline=\"\(ws.pipeline.deletingPathExtension().lastPathComponent)\"\(labels)} "
            return text.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap {
                Double($0.dropFirst(prefix.count))
            }
        }
        func expectWellFormed(_ text: String) {
            // Every line is a HELP or TYPE comment or `name{labels} value`.
            let sampleLine = /^[a-z_]+\{pipeline="[^"]*"(,[a-z_]+="[^"]*")*\} -?[0-9.]+(e[+-]?[0-9]+)?$/
            for line in text.split(separator: "\n") where !line.hasPrefix("# HELP ") && !line.hasPrefix("# TYPE ") {
                #expect(String(line).wholeMatch(of: sampleLine) != nil, "not a sample: \(line)")
            }
        }

        try await ws.run(main, ["--metrics-file", metrics.path], expecting: 0)
        let first = try String(contentsOf: metrics, encoding: .utf8)
        expectWellFormed(first)
        #expect(sample(first, "sluice_run_exit_code") == 0)
        #expect(sample(first, "sluice_run_documents", ",outcome=\"upserted\"") == Double(keys.count))
        let success = try #require(sample(first, "sluice_run_last_success_timestamp_seconds"))
        #expect(first.contains("sluice_run_phase_busy_seconds{") && first.contains("phase=\"embed\""))

        try Corpus.write("", to: ws.corpus.appendingPathComponent("empty.txt"))
        try await ws.run(main, ["--metrics-file", metrics.path], expecting: 2)
        let failed = try String(contentsOf: metrics, encoding: .utf8)
        expectWellFormed(failed)
        #expect(sample(failed, "sluice_run_exit_code") == 2)
        #expect(sample(failed, "sluice_run_failures", ",code=\"empty-document\"") == 1)
        #expect(sample(failed, "sluice_run_last_success_timestamp_seconds") == success, "the last success is kept")

        let dead = try await ws.sluice(
            ws.runArguments(
                main,
                ["--metrics-file", metrics.path, "--set", "sink.kind=qdrant", "--set", "sink.url=http://127.0.0.1:9"]
            )
        )
        #expect(dead.exitCode == 6, "\(dead)")
        let unavailable = try String(contentsOf: metrics, encoding: .utf8)
        #expect(sample(unavailable, "sluice_run_exit_code") == 6)
        #expect(sample(unavailable, "sluice_run_documents", ",outcome=\"upserted\"") == nil)
        #expect(!FileManager.default.fileExists(atPath: ws.file(".sluice.prom.tmp").path))
    }

    @Test("check --json: one object per check with subject, outcome, detail and fix, and the exit code")
    func checkJSON() async throws {
        let ws = try Workspace("check-json")
        defer { ws.cleanUp() }
        _ = try Corpus.write(count: 3, into: ws.corpus, seed: 0x5EED_0503)
        try Corpus.write("left out", to: ws.corpus.appendingPathComponent("notes.odd"))
        let main = ws.target("main")
        let result = try await ws.sluice(
            [
                "check", ws.pipeline.path, "--json", "--source", ws.corpus.path, "--set",
                "source.include=[\"**/*.md\", \"**/*.txt\"]",
            ]
                + main.arguments
        )
        #expect(result.exitCode == 0, "\(result)")
        let document = try Self.json(result.stdout)
        #expect(document["exit_code"] as? Int == 0)
        let checks = try #require(document["checks"] as? [[String: Any]])
        #expect(checks.map { $0["subject"] as? String } == ["pipeline", "embedder", "store", "source", "state"])
        let others = checks.filter { $0["subject"] as? String != "source" }
        #expect(others.allSatisfy { $0["outcome"] as? String == "ok" && $0["detail"] is String && $0["fix"] is NSNull })
        // A readable file the include list leaves out: a warning with its fix, and still exit 0.
        let source = try #require(checks.first { $0["subject"] as? String == "source" })
        #expect(source["outcome"] as? String == "warning", "\(source)")
        #expect(
            (source["detail"] as? String)?.contains("1 readable file is left out by source.include (e.g. notes.odd)")
                == true,
            "\(source)"
        )
        #expect((source["fix"] as? String)?.contains(#"add "**/*.odd" to source.include"#) == true, "\(source)")

        let broken = try await ws.sluice(
            ["check", ws.pipeline.path, "--json", "--set", "sink.kind=qdrant", "--set", "sink.url=http://127.0.0.1:9"]
                + main.arguments
        )
        #expect(broken.exitCode == 6, "\(broken)")
        let failed = try Self.json(broken.stdout)
        #expect(failed["exit_code"] as? Int == 6)
        let store = (failed["checks"] as? [[String: Any]])?.first { $0["subject"] as? String == "store" }
        #expect(store?["outcome"] as? String == "unavailable" && store?["fix"] is String)
    }

    @Test(
        "verify --json: missing and unknown vectors by document, consistent or not, and what --repair did; exit codes as in text"
    )
    func verifyJSON() async throws {
        let ws = try Workspace("verify-json")
        defer { ws.cleanUp() }
        let keys = try Corpus.write(count: 4, into: ws.corpus, seed: 0x5EED_0502)
        let main = ws.target("main")
        try await ws.run(main, expecting: 0)

        let consistent = try await ws.sluice(["verify", ws.pipeline.path, "--json"] + main.arguments)
        #expect(consistent.exitCode == 0, "\(consistent)")
        let clean = try Self.json(consistent.stdout)
        #expect(clean["consistent"] as? Bool == true)
        #expect(clean["missing_vectors"] as? Int == 0)
        #expect(clean["unknown_vectors"] as? Int == 0)
        #expect(clean["repair"] is NSNull)
        #expect(clean["vectors_tracked"] as? Int == clean["vectors_stored"] as? Int)

        // The main state over another store: all its vectors missing there, and the other's unknown.
        let other = ws.target("other")
        let side = ws.root.appendingPathComponent("side")
        _ = try Corpus.write(count: 1, into: side, seed: 0x5EED_0503, prefix: "side")
        let sideRun = try await ws.sluice(
            ["run", ws.pipeline.path] + other.arguments + ["--source", side.path, "--quiet"]
        )
        try #require(sideRun.exitCode == 0, "\(sideRun)")
        let crossed = Workspace.Target(state: main.state, index: other.index)

        let differing = try await ws.sluice(["verify", ws.pipeline.path, "--json"] + crossed.arguments)
        #expect(differing.exitCode == 2, "\(differing)")
        let report = try Self.json(differing.stdout)
        #expect(report["consistent"] as? Bool == false)
        let missing = try #require(report["missing"] as? [[String: Any]])
        #expect(missing.compactMap { $0["document_key"] as? String } == keys.sorted())
        #expect(missing.compactMap { $0["vectors"] as? Int }.reduce(0, +) == report["missing_vectors"] as? Int)
        let unknownCount = try #require(report["unknown_vectors"] as? Int)
        #expect(unknownCount > 0)
        #expect((report["unknown"] as? [String])?.count == unknownCount)

        let repaired = try await ws.sluice(
            ["verify", ws.pipeline.path, "--json", "--repair", "--allow-mass-delete"] + crossed.arguments
        )
        #expect(repaired.exitCode == 0, "\(repaired)")
        let repair = try #require(try Self.json(repaired.stdout)["repair"] as? [String: Any], "\(repaired)")
        #expect(repair["deleted_unknown"] as? Int == unknownCount)
        let run = try #require(repair["run"] as? [String: Any])
        #expect(run["documents_upserted"] as? Int == keys.count)
        #expect(repair["exit_code"] as? Int == 0)

        let after = try await ws.sluice(["verify", ws.pipeline.path, "--json"] + crossed.arguments)
        #expect(after.exitCode == 0, "\(after)")
        #expect(try Self.json(after.stdout)["consistent"] as? Bool == true)
    }

    @Test(
        "--log-format json: one JSON object per line with ts, level, label, message and the metadata; control characters escaped"
    )
    func jsonLogLines() async throws {
        let ws = try Workspace("log-json")
        defer { ws.cleanUp() }
        let keys = try Corpus.write(count: 3, into: ws.corpus, seed: 0x5EED_0504)
        try Corpus.write("", to: ws.corpus.appendingPathComponent(Self.hostile))
        let main = ws.target("main")
        let result = try await ws.sluice(
            ["run", ws.pipeline.path] + main.arguments + ["--source", ws.corpus.path, "--log-format", "json"]
        )
        #expect(result.exitCode == 2, "\(result)")

        let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(result.stderr.hasSuffix("\n"))
        var events: [[String: Any]] = []
        for line in lines { events.append(try Self.json(String(line))) }
        for event in events {
            #expect(
                event["ts"] is String && event["level"] is String && event["label"] as? String == "sluice"
                    && event["message"] is String,
                "\(event)"
            )
        }
        #expect(
            !result.stderr.unicodeScalars.contains {
                ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value)
            },
            "a raw control character"
        )

        let started = try #require(events.first { $0["message"] as? String == "run started" }, "\(result.stderr)")
        #expect(
            started["run"] is String && started["source"] as? String == ws.corpus.path,
            "metadata keys lose the sluice- prefix: \(started)"
        )
        let failed = try #require(events.first { $0["message"] as? String == "document failed" }, "\(result.stderr)")
        #expect(failed["level"] as? String == "warning")
        #expect(failed["document"] as? String == Self.hostile, "the real key comes back from the JSON")

        // The final progress line and the summary are log lines too, with the figures as numbers.
        let progress = try #require(
            events.last { ($0["message"] as? String)?.hasPrefix("progress: ") == true },
            "\(result.stderr)"
        )
        #expect(
            progress["total"] as? Int == keys.count + 1 && progress["done"] as? Int == keys.count + 1,
            "\(progress)"
        )
        #expect(progress["percent"] as? Int == 100 && progress["eta_s"] as? Int == 0, "\(progress)")
        #expect(progress["docs_per_s"] is NSNumber && progress["failed"] as? Int == 1, "\(progress)")
        let summary = try #require(events.last, "\(result.stderr)")
        #expect(
            (summary["message"] as? String)?.hasPrefix(
                "summary: documents: \(keys.count) upserted, 0 skipped, 1 failed"
            ) == true,
            "\(summary)"
        )
    }

    @Test(
        "plain progress (not a terminal): total, done, percent, rate and ETA; the summary starts on a line of its own"
    )
    func plainProgress() async throws {
        let ws = try Workspace("progress-plain")
        defer { ws.cleanUp() }
        let keys = try Corpus.write(count: 6, into: ws.corpus, seed: 0x5EED_0505)
        let main = ws.target("main")
        let arguments = ["run", ws.pipeline.path] + main.arguments + ["--source", ws.corpus.path]
        let first = try await ws.sluice(arguments)
        #expect(first.exitCode == 0, "\(first)")
        let lines = first.stderr.split(separator: "\n").map(String.init)
        let progress = try #require(lines.last { $0.contains("progress: ") }, "\(first.stderr)")
        #expect(progress.contains("done \(keys.count)/\(keys.count) (100%)"), "\(progress)")
        #expect(progress.contains(" docs/s") && progress.contains("ETA 0s"), "\(progress)")
        #expect(progress.contains("(upserted \(keys.count), skipped 0, failed 0)"), "\(progress)")
        #expect(lines.contains { $0.hasPrefix("phase ") }, "the table: \(first.stderr)")
        #expect(
            lines.contains("documents: \(keys.count) upserted, 0 skipped, 0 failed"),
            "the summary on a line of its own: \(first.stderr)"
        )

        // Unchanged: skipped documents count as done.
        let second = try await ws.sluice(arguments)
        #expect(second.stderr.contains("done \(keys.count)/\(keys.count) (100%)"), "\(second.stderr)")
        #expect(second.stderr.contains("(upserted 0, skipped \(keys.count), failed 0)"), "\(second.stderr)")
    }

    @Test("--quiet: no info lines and no table; warnings and the short summary stay; an explicit --log-level wins")
    func quiet() async throws {
        let ws = try Workspace("quiet")
        defer { ws.cleanUp() }
        let keys = try Corpus.write(count: 3, into: ws.corpus, seed: 0x5EED_0506)
        try Corpus.write("", to: ws.corpus.appendingPathComponent("empty.txt"))
        let main = ws.target("main")
        let base = ["run", ws.pipeline.path] + main.arguments + ["--source", ws.corpus.path, "--quiet"]
        let result = try await ws.sluice(base)
        #expect(result.exitCode == 2, "\(result)")
        #expect(
            !result.stderr.contains(" info ") && !result.stderr.contains("run started")
                && !result.stderr.contains("progress:"),
            "\(result.stderr)"
        )
        #expect(!result.stderr.contains("phase "), "no table: \(result.stderr)")
        #expect(
            result.stderr.contains("warning") && result.stderr.contains("document failed"),
            "warnings stay: \(result.stderr)"
        )
        #expect(
            result.stderr.split(separator: "\n").contains("documents: \(keys.count) upserted, 0 skipped, 1 failed"),
            "the summary stays: \(result.stderr)"
        )

        try Corpus.write("now it has text.\n", to: ws.corpus.appendingPathComponent("empty.txt"))
        let verbose = try await ws.sluice(base + ["--log-level", "info"])
        #expect(verbose.exitCode == 0, "\(verbose)")
        #expect(verbose.stderr.contains("run started"), "\(verbose.stderr)")
    }
}
