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
    /// -k 10 --json` of every query, mode by mode.
    @Test func theFiguresAreEvaluatePysOverSluiceSearch() async throws {
        let (ws, target) = try await indexed("eval-figures")
        defer { ws.cleanUp() }
        let modes = ["vector", "keyword", "hybrid"]
        let eval = try await ws.sluice(
            ["eval", ws.pipeline.path] + target.arguments + ["--queries", ws.file("judged.jsonl").path, "--json"]
                + modes.flatMap { ["--mode", $0] }
        )
        #expect(eval.exitCode == 0, "\(eval)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(eval.stdout.utf8)) as? [String: Any])
        let configurations = try #require(report["configurations"] as? [[String: Any]])
        #expect(configurations.map { $0["name"] as? String } == modes)
        // What sluice search returns, scored by evaluate.py.
        var searched: [String: [String: Any]] = [:]
        for mode in modes {
            for line in Self.queries.split(separator: "\n") {
                let query = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                let result = try await ws.sluice(
                    ["search", "-k", "10", "--json", "--mode", mode] + target.arguments
                        + ["--", query["query"] as! String, ws.pipeline.path]
                )
                try #require(result.exitCode == 0, "\(result)")
                let results = try result.stdout.split(separator: "\n").map {
                    try JSONSerialization.jsonObject(with: Data($0.utf8))
                }
                searched[mode, default: [:]][query["id"] as! String] = results
            }
        }
        let searchedFile = ws.file("searched.json")
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
        let reference = try #require(
            try JSONSerialization.jsonObject(
                with: Data(
                    try Self.python(
                        [
                            "-c", script, Self.repository.appendingPathComponent("Benchmarks/retrieval").path,
                            ws.file("judged.jsonl").path, searchedFile.path,
                        ],
                        in: ws
                    ).utf8
                )
            ) as? [String: [Double]]
        )
        for configuration in configurations {
            let mode = configuration["name"] as! String
            let all = try #require((configuration["scores"] as? [String: [String: Any]])?["all"])
            let ours = ["recall@5", "recall@10", "ndcg@10"].map { all[$0] as? Double ?? -1 }
            let theirs = try #require(reference[mode])
            for (a, b) in zip(ours, theirs) { #expect(abs(a - b) < 1e-9, "\(mode): \(ours) against \(theirs)") }
            #expect(all["queries"] as? Int == 6)
        }
        // The figures are not trivial: keyword finds the copies, and the zebra is missed by every mode.
        let keyword = try #require(configurations.first { $0["name"] as? String == "keyword" })
        let misses = try #require(keyword["misses"] as? [[String: Any]])
        #expect(misses.contains { $0["id"] as? String == "q6" })
        #expect(!misses.contains { $0["id"] as? String == "q1" })
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
