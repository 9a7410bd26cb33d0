import Foundation
import SluiceCore
import SluiceHTTP
import SluiceTesting
import Testing

/// `sluice eval` end to end on the built binary: a small corpus indexed with the hash embedder, scored per
/// mode; the figures checked against Benchmarks/retrieval/evaluate.py's scoring of `sluice search --json`;
/// `eval.queries`, bad files, a dead store, and `--generate` against the chat stand-in.
@Suite(.serialized)
struct EvalCLITests {
    static let documents = [
        "valves.md": "# Valves\n\nThe sluice valve opens at dawn and closes at dusk.\n",
        // A copy: collapsed into one result that credits both documents.
        "copy/valves.md": "# Valves\n\nThe sluice valve opens at dawn and closes at dusk.\n",
        "weather.md": "# Weather\n\nRain is expected in the afternoon, with wind from the west.\n",
        "gates.txt": "Gates are painted green every spring.\n",
        "canal.txt": "The canal lock raises boats by four metres; its gates are opened by hand at dawn.\n",
        "keepers.txt": (1...40).map { "Keeper \($0) of lock \($0 * 3) logs the water level at \($0 % 12) o'clock." }
            .joined(separator: " ") + "\n",
    ]

    static let queries =
        [
            #"{"id": "q1", "query": "when does the valve open", "kind": "natural", "relevant": [{"key": "valves.md", "contains": "opens at dawn"}, {"key": "copy/valves.md", "contains": "opens  at\ndawn"}]}"#,
            #"{"id": "q2", "query": "gates painted green", "kind": "exact", "relevant": [{"key": "gates.txt"}]}"#,
            #"{"id": "q3", "query": "where does the wind come from", "kind": "natural", "relevant": [{"key": "weather.md", "contains": "wind from the west"}]}"#,
            #"{"id": "q4", "query": "boats raised by the lock", "kind": "exact", "relevant": [{"key": "canal.txt"}, {"key": "gates.txt"}]}"#,
            #"{"id": "q5", "query": "keeper of lock 36", "kind": "exact", "relevant": [{"key": "keepers.txt", "contains": "Keeper 12 of lock 36"}]}"#,
            #"{"id": "q6", "query": "zebra crossing", "kind": "natural", "relevant": [{"key": "nowhere.txt"}]}"#,
        ].joined(separator: "\n") + "\n"

    func indexed(_ label: String) async throws -> (Workspace, Workspace.Target) {
        let ws = try Workspace(label)
        for (name, text) in Self.documents {
            let url = ws.corpus.appendingPathComponent(name)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        try Self.queries.write(to: ws.file("judged.jsonl"), atomically: true, encoding: .utf8)
        let target = ws.target("index")
        try await ws.run(target, expecting: 0)
        return (ws, target)
    }

    static var repository: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    /// Runs python3 with `arguments`; its standard output.
    static func python(_ arguments: [String], in ws: Workspace) throws -> String {
        let output = ws.file("python-\(UUID().uuidString).out")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        process.standardOutput = try FileHandle(forWritingTo: output)
        try process.run()
        let exit = ProcessExit.wait(for: process)
        try #require(exit.status == 0 && !exit.signaled, "python3 failed: \(exit)")
        return try String(contentsOf: output, encoding: .utf8)
    }

    /// The figures equal those of evaluate.py's scoring (the repository's reference) over `sluice search
    /// -k 10 --json` of every query, configuration by configuration: each mode, and hybrid once per fusion
    /// (`--mode vector,keyword,hybrid --fusion score,rrf`), each searched as `search --fusion` does.
    @Test func theFiguresAreEvaluatePysOverSluiceSearch() async throws {
        let (ws, target) = try await indexed("eval-figures")
        defer { ws.cleanUp() }
        let searches: [(name: String, arguments: [String])] = [
            ("vector", ["--mode", "vector"]), ("keyword", ["--mode", "keyword"]),
            ("hybrid-score", ["--mode", "hybrid", "--fusion", "score"]),
            ("hybrid-rrf", ["--mode", "hybrid", "--fusion", "rrf"]),
        ]
        let eval = try await ws.sluice(
            ["eval", ws.pipeline.path] + target.arguments + [
                "--queries", ws.file("judged.jsonl").path, "--json", "--mode", "vector,keyword",
                "--mode", "hybrid", "--fusion", "score,rrf",
            ]
        )
        #expect(eval.exitCode == 0, "\(eval)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(eval.stdout.utf8)) as? [String: Any])
        let configurations = try #require(report["configurations"] as? [[String: Any]])
        #expect(configurations.map { $0["name"] as? String } == searches.map(\.name))
        #expect(configurations.map { $0["fusion"] as? String } == [nil, nil, "score", "rrf"])
        // What sluice search returns, scored by evaluate.py.
        var searched: [String: [String: Any]] = [:]
        for (name, arguments) in searches {
            for line in Self.queries.split(separator: "\n") {
                let query = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                let result = try await ws.sluice(
                    ["search", "-k", "10", "--json"] + arguments + target.arguments
                        + ["--", query["query"] as! String, ws.pipeline.path]
                )
                try #require(result.exitCode == 0, "\(result)")
                let results = try result.stdout.split(separator: "\n").map {
                    try JSONSerialization.jsonObject(with: Data($0.utf8))
                }
                searched[name, default: [:]][query["id"] as! String] = results
            }
        }
        let reference = try Self.reference(searched, in: ws)
        for configuration in configurations {
            let name = configuration["name"] as! String
            let all = try #require((configuration["scores"] as? [String: [String: Any]])?["all"])
            let ours = ["recall@5", "recall@10", "ndcg@10"].map { all[$0] as? Double ?? -1 }
            let theirs = try #require(reference[name])
            for (a, b) in zip(ours, theirs) { #expect(abs(a - b) < 1e-9, "\(name): \(ours) against \(theirs)") }
            #expect(all["queries"] as? Int == 6)
        }
        // The figures are not trivial: keyword finds the copies, and the zebra is missed by every mode.
        let keyword = try #require(configurations.first { $0["name"] as? String == "keyword" })
        let misses = try #require(keyword["misses"] as? [[String: Any]])
        #expect(misses.contains { $0["id"] as? String == "q6" })
        #expect(!misses.contains { $0["id"] as? String == "q1" })
    }

    /// evaluate.py's recall@5, recall@10 and nDCG@10 (means over the queries) of `searched`: per
    /// configuration, per query id, the results of `sluice search --json`.
    static func reference(_ searched: [String: [String: Any]], in ws: Workspace) throws -> [String: [Double]] {
        let searchedFile = ws.file("searched-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: searched).write(to: searchedFile)
        let script = """
            import json, sys
            sys.path.insert(0, sys.argv[1])
            import evaluate
            queries = evaluate.load_queries(sys.argv[2])
            searched = json.load(open(sys.argv[3]))
            out = {}
            for mode, per in searched.items():
                scores = [evaluate.score(per[q["id"]], q["relevant"]) for q in queries]
                out[mode] = [sum(s[i] for s in scores) / len(scores) for i in range(3)]
            print(json.dumps(out))
            """
        return try #require(
            try JSONSerialization.jsonObject(
                with: Data(
                    try python(
                        [
                            "-c", script, repository.appendingPathComponent("Benchmarks/retrieval").path,
                            ws.file("judged.jsonl").path, searchedFile.path,
                        ],
                        in: ws
                    ).utf8
                )
            ) as? [String: [Double]]
        )
    }

    /// Without `--fusion`, hybrid is searched with the pipeline's fusion (`search.fusion`), as `sluice
    /// search` searches it: the same figures as evaluate.py over `search --json` with that setting.
    @Test func hybridUsesThePipelinesFusion() async throws {
        let (ws, target) = try await indexed("eval-pipeline-fusion")
        defer { ws.cleanUp() }
        let setting = ["--set", "search.fusion=rrf", "--set", "search.rrf_k=1"]
        let eval = try await ws.sluice(
            ["eval", ws.pipeline.path] + target.arguments + setting + [
                "--queries", ws.file("judged.jsonl").path, "--json", "--mode", "hybrid",
            ]
        )
        #expect(eval.exitCode == 0, "\(eval)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(eval.stdout.utf8)) as? [String: Any])
        let configuration = try #require((report["configurations"] as? [[String: Any]])?.first)
        #expect(configuration["name"] as? String == "hybrid" && configuration["fusion"] as? String == "rrf")
        var searched: [String: Any] = [:]
        for line in Self.queries.split(separator: "\n") {
            let query = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let result = try await ws.sluice(
                ["search", "-k", "10", "--json", "--mode", "hybrid"] + target.arguments + setting
                    + ["--", query["query"] as! String, ws.pipeline.path]
            )
            try #require(result.exitCode == 0, "\(result)")
            searched[query["id"] as! String] = try result.stdout.split(separator: "\n").map {
                try JSONSerialization.jsonObject(with: Data($0.utf8))
            }
        }
        let theirs = try #require(try Self.reference(["hybrid": searched], in: ws)["hybrid"])
        let all = try #require((configuration["scores"] as? [String: [String: Any]])?["all"])
        let ours = ["recall@5", "recall@10", "ndcg@10"].map { all[$0] as? Double ?? -1 }
        for (a, b) in zip(ours, theirs) { #expect(abs(a - b) < 1e-9, "\(ours) against \(theirs)") }
    }

    /// `--mode` and `--fusion` take lists; a name they do not know, or a fusion without hybrid, exits 1.
    @Test func badModesAndFusionsExitOne() async throws {
        let ws = try Workspace("eval-bad-options")
        defer { ws.cleanUp() }
        let queries = ["--queries", ws.file("judged.jsonl").path]
        for (arguments, reason) in [
            (["--mode", "vector,fuzzy"], "--mode must be one of vector, keyword, hybrid, not fuzzy"),
            (["--fusion", "score,max"], "--fusion must be one of score, rrf, not max"),
            (["--mode", "vector,keyword", "--fusion", "rrf"], "add hybrid to --mode"),
            (["--generate", "3", "--out", ws.file("g.jsonl").path, "--rerank"], "--generate writes a query file"),
        ] {
            let result = try await ws.sluice(["eval", ws.pipeline.path] + queries + arguments)
            #expect(result.exitCode == 1, "\(arguments): \(result)")
            #expect(result.stderr.contains(reason), "\(arguments): \(result.stderr)")
        }
    }

    /// `--rerank` against the rerank stand-in (it scores a passage by the query's distinct words in it): the
    /// first stage beside the reranked results; `--no-rerank` the first stage alone, without a request; by
    /// default the reranked results; past the deadline every query is listed as not reranked and scored in the
    /// first stage's order; `--rerank` without `search.rerank` exits 1.
    @Test func theRerankerBesideTheFirstStage() async throws {
        let ws = try Workspace("eval-rerank")
        defer { ws.cleanUp() }
        // Keyword ranks the rare word repeated first; the reranker the passage with two of the query's words.
        for (name, text) in [
            ("valve.txt", "valve valve valve valve valve valve\n"), ("relief.txt", "the pressure relief line\n"),
            ("gauge.txt", "a pressure gauge\n"), ("map.txt", "a relief map\n"),
        ] {
            try text.write(to: ws.corpus.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        let judged = ws.file("rerank.jsonl")
        try #"{"id": "r1", "query": "valve pressure relief", "kind": "natural", "relevant": [{"key": "relief.txt"}]}"#
            .appending("\n").write(to: judged, atomically: true, encoding: .utf8)
        let target = ws.target("index")
        try await ws.run(target, expecting: 0)
        let key = "rk-eval-\(UUID().uuidString)"
        let reranker = try await StandInServer.launch(script: "rerank_standin.py", arguments: ["--api-key", key])
        func settings(_ server: StandInServer, deadline: Double = 60) -> [String] {
            [
                "--set", "search.rerank.kind=tei", "--set", "search.rerank.url=\(server.baseURL)/rerank",
                "--set", "search.rerank.api_key_env=SLUICE_TEST_EVAL_RERANK_KEY",
                "--set", "search.rerank.deadline_seconds=\(deadline)",
            ]
        }
        func eval(_ extra: [String]) async throws -> (CommandResult, [[String: Any]]) {
            let result = try await ws.sluice(
                ["eval", ws.pipeline.path] + target.arguments + ["--queries", judged.path, "--mode", "keyword"] + extra,
                environment: ["SLUICE_TEST_EVAL_RERANK_KEY": key]
            )
            guard extra.contains("--json"), result.exitCode == 0 else { return (result, []) }
            let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            return (result, try #require(object?["configurations"] as? [[String: Any]]))
        }
        func mrr(_ configuration: [String: Any]) -> Double? {
            ((configuration["scores"] as? [String: [String: Any]])?["all"])?["mrr@10"] as? Double
        }
        func requests() async throws -> Int {
            let stats = try await HTTPClient.shared.send(HTTPRequest(url: reranker.baseURL + "/stats"))
            let counters = try JSONSerialization.jsonObject(with: Data(stats.body)) as? [String: Any]
            return counters?["requests"] as? Int ?? -1
        }

        let (both, configurations) = try await eval(settings(reranker) + ["--rerank", "--json"])
        #expect(both.exitCode == 0, "\(both)")
        #expect(configurations.map { $0["name"] as? String } == ["keyword", "keyword+rerank"])
        #expect(mrr(configurations[0]) == 0.5, "the first stage: the repeated word first")
        #expect(mrr(configurations[1]) == 1, "the reranker's order")
        #expect(configurations[0]["rerank"] == nil)
        let status = try #require(configurations[1]["rerank"] as? [String: Any])
        #expect(status["model"] as? String == "tei" && status["reranked"] as? Int == 1)
        #expect((status["not_reranked"] as? [Any])?.isEmpty == true)
        #expect(!both.stdout.contains(key) && !both.stderr.contains(key))

        let table = try await eval(settings(reranker))
        #expect(table.0.exitCode == 0, "\(table.0)")
        #expect(table.0.stdout.contains("\nkeyword+rerank all "), "\(table.0.stdout)")
        #expect(!table.0.stdout.contains("\nkeyword "), "by default the reranked results alone")
        #expect(table.0.stdout.contains("keyword+rerank: reranked by tei on all 1 queries\n"))

        let before = try await requests()
        let (plain, firstStage) = try await eval(settings(reranker) + ["--no-rerank", "--json"])
        #expect(plain.exitCode == 0, "\(plain)")
        #expect(firstStage.map { $0["name"] as? String } == ["keyword"])
        #expect(try await requests() == before, "--no-rerank asks the reranker nothing")

        // Past its deadline: scored in the first stage's order, and each query said so.
        let slow = try await StandInServer.launch(
            script: "rerank_standin.py",
            arguments: ["--api-key", key, "--delay-ms", "120000"]
        )
        let (late, lateConfigurations) = try await eval(settings(slow, deadline: 0.5) + ["--rerank", "--json"])
        #expect(late.exitCode == 0, "\(late)")
        #expect(lateConfigurations.map(mrr) == [0.5, 0.5])
        let lateStatus = try #require(lateConfigurations.last?["rerank"] as? [String: Any])
        #expect(lateStatus["reranked"] as? Int == 0)
        let skipped = try #require(lateStatus["not_reranked"] as? [[String: Any]])
        #expect(skipped.map { $0["id"] as? String } == ["r1"])
        #expect((skipped.first?["reason"] as? String)?.contains("search.rerank.deadline_seconds") == true)
        let lateTable = try await eval(settings(slow, deadline: 0.5) + ["--rerank"])
        #expect(
            lateTable.0.stdout.contains(
                "keyword+rerank: not reranked by tei on 1 of 1 queries (scored in the first stage's order):\n  r1 [natural] valve pressure relief — the reranker did not answer within"
            ),
            "\(lateTable.0.stdout)"
        )
        slow.stop()

        let none = try await eval(["--rerank"])
        #expect(none.0.exitCode == 1 && none.0.stderr.contains("set search.rerank"), "\(none.0)")
    }

    /// `eval.queries` names the file, relative to the pipeline file; the table lists modes per kind.
    @Test func thePipelineNamesTheQueryFile() async throws {
        let (ws, target) = try await indexed("eval-table")
        defer { ws.cleanUp() }
        let handle = try FileHandle(forWritingTo: ws.pipeline)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("eval:\n  queries: ./judged.jsonl\n".utf8))
        try handle.close()
        let result = try await ws.sluice(["eval", ws.pipeline.path] + target.arguments + ["--misses", "-k", "3"])
        #expect(result.exitCode == 0, "\(result)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "retrieval on 6 queries, top 3 results per query")
        #expect(lines[1].hasPrefix("configuration kind         queries  recall@3       MRR    nDCG@3"))
        // The local store has keyword search: the default mode is hybrid.
        #expect(lines.contains { $0.hasPrefix("hybrid        all                6") })
        #expect(lines.contains { $0.hasPrefix("hybrid        exact              3") })
        #expect(lines.contains { $0.hasPrefix("hybrid        natural            3") })
        #expect(result.stdout.contains("q6 [natural] zebra crossing — nothing found\n      missed nowhere.txt\n"))
    }

    @Test func aBadQueryFileExitsOneNamingTheLine() async throws {
        let (ws, target) = try await indexed("eval-bad")
        defer { ws.cleanUp() }
        let bad = ws.file("bad.jsonl")
        try (Self.queries.split(separator: "\n")[0] + "\n{\"id\": \"x\", \"query\": \"q\", \"relevant\": []}\n").write(
            to: bad,
            atomically: true,
            encoding: .utf8
        )
        let result = try await ws.sluice(["eval", ws.pipeline.path] + target.arguments + ["--queries", bad.path])
        #expect(result.exitCode == 1, "\(result)")
        #expect(result.stderr.contains("bad.jsonl:2: `relevant` is empty"), "\(result)")
        let none = try await ws.sluice(["eval", ws.pipeline.path] + target.arguments)
        #expect(none.exitCode == 1 && none.stderr.contains("no query file"), "\(none)")
        let missing = try await ws.sluice(
            ["eval", ws.pipeline.path] + target.arguments + ["--queries", ws.file("missing.jsonl").path]
        )
        #expect(missing.exitCode == 1 && missing.stderr.contains("cannot read the query file"), "\(missing)")
        let usage = try await ws.sluice(["eval", ws.pipeline.path, "--out", ws.file("x").path])
        #expect(usage.exitCode == 1, "\(usage)")
    }

    @Test func aStoreThatCannotBeReachedExitsSix() async throws {
        let ws = try Workspace("eval-dead")
        defer { ws.cleanUp() }
        try Self.queries.write(to: ws.file("judged.jsonl"), atomically: true, encoding: .utf8)
        var target = ws.target("main")
        target.sink = ["sink.kind=qdrant", "sink.url=http://127.0.0.1:1", "sink.collection=c", "sink.max_retries=0"]
            .flatMap { ["--set", $0] }
        let result = try await ws.sluice(
            ["eval", ws.pipeline.path] + target.arguments + ["--queries", ws.file("judged.jsonl").path]
        )
        #expect(result.exitCode == 6, "\(result)")
    }

    /// `--generate` with an answer model that cannot be reached exits 6, with a key it refuses 5; the file
    /// is not written.
    @Test func generateExitsAsAskDoesWhenTheModelFails() async throws {
        let (ws, target) = try await indexed("eval-generate-fails")
        defer { ws.cleanUp() }
        let server = try await StandInServer.launch(
            script: "chat_standin.py",
            arguments: ["--api-key", "sk-right", "--model", "test-model"]
        )
        let out = ws.file("generated.jsonl")
        for (url, code) in [("http://127.0.0.1:1/v1", Int32(6)), ("\(server.baseURL)/v1", Int32(5))] {
            let result = try await ws.sluice(
                ["eval", ws.pipeline.path] + target.arguments + [
                    "--generate", "2", "--out", out.path, "--set", "answer.base_url=\(url)",
                    "--set", "answer.model=test-model", "--set", "answer.api_key_env=SLUICE_TEST_EVAL_KEY",
                    "--set", "answer.max_retries=0",
                ],
                environment: ["SLUICE_TEST_EVAL_KEY": "sk-wrong"],
                timeout: .seconds(120)
            )
            #expect(result.exitCode == code, "\(result)")
            #expect(!result.stderr.contains("sk-wrong"))
            #expect(!FileManager.default.fileExists(atPath: out.path))
        }
    }

    /// `--generate`: questions from the answer model (the stand-in writes one from each passage's first
    /// words), one relevant document each with a phrase of its chunk; the same seed gives the same file, and
    /// the file scores through `sluice eval`.
    @Test func generatesAJudgedFileFromTheIndex() async throws {
        let (ws, target) = try await indexed("eval-generate")
        defer { ws.cleanUp() }
        let key = "sk-test-\(UUID().uuidString.lowercased())-eval"
        let server = try await StandInServer.launch(
            script: "chat_standin.py",
            arguments: ["--api-key", key, "--model", "test-model"]
        )
        func generate(_ out: URL, seed: Int) async throws -> CommandResult {
            try await ws.sluice(
                ["eval", ws.pipeline.path] + target.arguments + [
                    "--generate", "4", "--out", out.path, "--seed", "\(seed)",
                    "--set", "answer.base_url=\(server.baseURL)/v1", "--set", "answer.model=test-model",
                    "--set", "answer.api_key_env=SLUICE_TEST_EVAL_KEY", "--set", "answer.max_retries=1",
                ],
                environment: ["SLUICE_TEST_EVAL_KEY": key],
                timeout: .seconds(120)
            )
        }
        let first = ws.file("generated.jsonl")
        let result = try await generate(first, seed: 3)
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stderr.contains("wrote 4 questions"), "\(result)")
        #expect(!result.stdout.contains(key) && !result.stderr.contains(key))
        let text = try String(contentsOf: first, encoding: .utf8)
        #expect(!text.contains(key))
        let lines = text.split(separator: "\n")
        #expect(lines.count == 4)
        for (index, line) in lines.enumerated() {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["id"] as? String == String(format: "g%03d", index + 1))
            #expect(object["kind"] as? String == "generated")
            #expect((object["query"] as? String)?.hasPrefix("Which passage mentions ") == true)
            let relevant = try #require((object["relevant"] as? [[String: Any]])?.first)
            let document = try #require(Self.documents[relevant["key"] as? String ?? ""])
            let phrase = try #require(relevant["contains"] as? String)
            #expect(phrase.split(separator: " ").count >= 4)
            #expect(document.split(whereSeparator: \.isWhitespace).joined(separator: " ").contains(phrase))
        }
        let stats = try await HTTPClient.shared.send(HTTPRequest(url: server.baseURL + "/stats"))
        let counters = try #require(try JSONSerialization.jsonObject(with: Data(stats.body)) as? [String: Any])
        #expect(counters["questions"] as? Int == 4)
        // The same seed, the same file; another seed, another sample.
        let again = ws.file("again.jsonl")
        #expect(try await generate(again, seed: 3).exitCode == 0)
        #expect(try Data(contentsOf: again) == Data(contentsOf: first))
        let other = ws.file("other.jsonl")
        #expect(try await generate(other, seed: 4).exitCode == 0)
        #expect(try Data(contentsOf: other) != Data(contentsOf: first))
        // The questions name their passages' first words: keyword search finds every one.
        let scored = try await ws.sluice(
            ["eval", ws.pipeline.path] + target.arguments + ["--queries", first.path, "--mode", "keyword", "--json"]
        )
        #expect(scored.exitCode == 0, "\(scored)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(scored.stdout.utf8)) as? [String: Any])
        let all = try #require(
            ((report["configurations"] as? [[String: Any]])?.first?["scores"] as? [String: [String: Any]])?["all"]
        )
        #expect(all["recall@10"] as? Double == 1, "\(scored.stdout)")
    }
}
