import Foundation
import SluiceCore
import Testing

/// The quality gate of `sluice generation promote` (docs/GENERATIONS.md, "The quality gate"), end to end on
/// the built binary: with a judged query file the candidate is scored beside the active generation and
/// refused (exit 8, nothing changed) when it is below it or below `--min-ndcg`; `sluice eval --generation`
/// scores either or both; `sluice generation status --json` shows each generation and the last comparison.
///
/// The worse candidate is worse by construction, not by luck: every judged answer is a sentence of 14 words
/// (`contains`), and the candidate's chunks hold at most 8 words, so none of its results can hold one
/// (nDCG 0), while the active generation's one chunk per document always can.
@Suite(.serialized)
struct GenerationQualityGateCLITests {
    static let documents = [
        "valves.txt":
            "Valves. The sluice valve on the east bank opens at dawn and closes again when the light fades at dusk. Keepers oil it weekly.",
        "weather.txt":
            "Weather. Rain is expected over the canal in the afternoon with a strong wind blowing in from the western hills. Boats stay moored.",
        "gates.txt":
            "Gates. Every spring the lock gates are scraped and painted a bright shade of green by the volunteers of the canal trust. It takes a week.",
        "boats.txt":
            "Boats. The lock raises the narrow boats by four metres in about twelve minutes when both upper paddles are fully open. Queues form in summer.",
        "keepers.txt":
            "Keepers. The lock keeper writes the water level into the ledger at six every morning and again at six every evening. The ledger is old.",
        "bridge.txt":
            "Bridge. The swing bridge near the mill is turned by hand and must be closed to boats whenever a train is due. Walkers wait.",
    ]

    /// Five questions answered by a 14-word sentence each, and one answered by a document that does not exist
    /// (so that no generation scores 1).
    static let queries =
        [
            #"{"id": "q1", "query": "when does the sluice valve open", "relevant": [{"key": "valves.txt", "contains": "The sluice valve on the east bank opens at dawn and closes again when the light"}]}"#,
            #"{"id": "q2", "query": "wind from the western hills", "relevant": [{"key": "weather.txt", "contains": "Rain is expected over the canal in the afternoon with a strong wind blowing in"}]}"#,
            #"{"id": "q3", "query": "what colour are the lock gates painted", "relevant": [{"key": "gates.txt", "contains": "Every spring the lock gates are scraped and painted a bright shade of green by"}]}"#,
            #"{"id": "q4", "query": "how far does the lock raise boats", "relevant": [{"key": "boats.txt", "contains": "The lock raises the narrow boats by four metres in about twelve minutes when both"}]}"#,
            #"{"id": "q5", "query": "when is the water level written in the ledger", "relevant": [{"key": "keepers.txt", "contains": "The lock keeper writes the water level into the ledger at six every morning and"}]}"#,
            #"{"id": "q6", "query": "zebra crossing", "relevant": [{"key": "nowhere.txt"}]}"#,
        ].joined(separator: "\n") + "\n"

    /// The candidate that cannot hold an answer: chunks of at most 8 words.
    static let worse = ["--set", "chunk.max_tokens=8", "--set", "chunk.overlap_tokens=0"]
    /// The pipeline file's chunking again (after `worse`, whose settings a later candidate inherits).
    static let restored = ["--set", "chunk.max_tokens=200", "--set", "chunk.overlap_tokens=24"]
    /// A candidate that chunks these documents as the active one does: the same answers, equal figures.
    static let equal = ["--set", "chunk.max_tokens=300"]

    /// A workspace with the corpus and the judged file indexed in target `main`; with `configured`, the
    /// pipeline file names the judged file (`eval.queries`).
    static func indexed(_ label: String, configured: Bool) async throws -> (Workspace, Workspace.Target) {
        let ws = try Workspace(label)
        for (name, text) in documents { try Corpus.write(text + "\n", to: ws.corpus.appendingPathComponent(name)) }
        try queries.write(to: ws.file("judged.jsonl"), atomically: true, encoding: .utf8)
        if configured {
            let pipeline = try String(contentsOf: ws.pipeline, encoding: .utf8) + "eval:\n  queries: ./judged.jsonl\n"
            try pipeline.write(to: ws.pipeline, atomically: true, encoding: .utf8)
        }
        let main = ws.target("main")
        try await ws.run(main, expecting: 0)
        return (ws, main)
    }

    /// `sluice generation status --json`, parsed.
    static func status(_ ws: Workspace, _ target: Workspace.Target) async throws -> [String: Any] {
        let result = try await GenerationCLITests.generation(ws, "status", target, ["--json"])
        try #require(result.exitCode == 0, "\(result)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    static func searches(_ ws: Workspace, _ target: Workspace.Target) async throws -> [String] {
        var answers: [String] = []
        for query in ["sluice valve", "lock gates painted green", "water level ledger"] {
            answers.append(try await GenerationCLITests.search(ws, target, query))
        }
        return answers
    }

    @Test("a worse candidate is refused with exit 8 and the active generation stays; a better one is promoted")
    func worseRefusedBetterPromoted() async throws {
        let (ws, main) = try await Self.indexed("gate-worse", configured: true)
        defer { ws.cleanUp() }
        let export = try await ws.export(main)
        let answers = try await Self.searches(ws, main)
        #expect(try await GenerationCLITests.generation(ws, "start", main, Self.worse).exitCode == 0)
        try await ws.run(main, expecting: 0)

        let refused = try await GenerationCLITests.generation(ws, "promote", main)
        #expect(refused.exitCode == 8, "\(refused)")
        #expect(refused.stderr.contains("below the bar") && refused.stderr.contains("nothing changed"), "\(refused)")
        expectSameExport(try await ws.export(main), export, "after the refused promote")
        #expect(try await Self.searches(ws, main) == answers, "a refused promote changed the answers")

        // Both figures are kept and shown; the generations are as they were.
        var status = try await Self.status(ws, main)
        #expect((status["active"] as? [String: Any])?["id"] as? String == "g0", "\(status)")
        #expect((status["candidate"] as? [String: Any])?["id"] as? String == "g1", "\(status)")
        let comparison = try #require(status["comparison"] as? [String: Any], "\(status)")
        let activeNDCG = try #require(comparison["activeNDCG"] as? Double)
        let candidateNDCG = try #require(comparison["candidateNDCG"] as? Double)
        #expect(comparison["passed"] as? Bool == false && comparison["configuration"] as? String == "hybrid")
        #expect(candidateNDCG == 0 && activeNDCG > 0, "\(comparison)")
        #expect(refused.stderr.contains(String(format: "%.3f", activeNDCG)), "\(refused)")
        let text = try await GenerationCLITests.generation(ws, "status", main)
        #expect(text.stdout.contains("last comparison: candidate g1 nDCG@10 0.000"), "\(text)")
        #expect(text.stdout.contains("refused"), "\(text)")

        // `sluice eval --generation both` gives the same figures, a row per generation.
        let eval = try await ws.sluice(
            ["eval", ws.pipeline.path] + main.arguments + ["--generation", "both", "--json"]
        )
        #expect(eval.exitCode == 0, "\(eval)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(eval.stdout.utf8)) as? [String: Any])
        let rows = try #require(report["configurations"] as? [[String: Any]])
        #expect(rows.map { ($0["generation"] as? [String: String])?["role"] } == ["active", "candidate"], "\(rows)")
        #expect(rows.map { ($0["generation"] as? [String: String])?["id"] } == ["g0", "g1"], "\(rows)")
        let figures = rows.map { (($0["scores"] as? [String: Any])?["all"] as? [String: Any])?["ndcg@10"] as? Double }
        #expect(figures == [activeNDCG, candidateNDCG], "\(figures)")
        let table = try await ws.sluice(["eval", ws.pipeline.path] + main.arguments + ["--generation", "candidate"])
        #expect(table.exitCode == 0 && table.stdout.contains("candidate g1"), "\(table)")

        // --skip-eval promotes the worse one anyway, and says so.
        let skipped = try await GenerationCLITests.generation(ws, "promote", main, ["--skip-eval"])
        #expect(skipped.exitCode == 0, "\(skipped)")
        #expect(skipped.stdout.contains("no quality check was made (--skip-eval)"), "\(skipped)")
        #expect((try await Self.status(ws, main)["active"] as? [String: Any])?["id"] as? String == "g1")

        // A candidate with the pipeline file's chunking again is better: promoted, figures kept.
        #expect(try await GenerationCLITests.generation(ws, "start", main, Self.restored).exitCode == 0)
        try await ws.run(main, expecting: 0)
        let promoted = try await GenerationCLITests.generation(ws, "promote", main)
        #expect(promoted.exitCode == 0, "\(promoted)")
        #expect(promoted.stdout.contains("quality check passed"), "\(promoted)")
        status = try await Self.status(ws, main)
        #expect((status["active"] as? [String: Any])?["id"] as? String == "g2", "\(status)")
        let better = try #require(status["comparison"] as? [String: Any], "\(status)")
        #expect(better["passed"] as? Bool == true && better["active"] as? String == "g1", "\(better)")
        #expect(better["candidateNDCG"] as? Double == activeNDCG && better["activeNDCG"] as? Double == 0, "\(better)")
        #expect(try await Self.searches(ws, main) == answers, "the restored chunking answers otherwise")
    }

    @Test(
        "an equal candidate is promoted; --min-ndcg above its score refuses it; without a query file no check is made"
    )
    func equalPromotedMinimumRefuses() async throws {
        let (ws, main) = try await Self.indexed("gate-minimum", configured: false)
        defer { ws.cleanUp() }
        let judged = ["--queries", ws.file("judged.jsonl").path]
        #expect(try await GenerationCLITests.generation(ws, "start", main, Self.equal).exitCode == 0)
        try await ws.run(main, expecting: 0)
        let export = try await ws.export(main)

        for (arguments, reason) in [
            (["--skip-eval"] + judged, "--skip-eval promotes without comparing"),
            (["--min-ndcg", "0.5"], "--min-ndcg needs a judged query file"),
            (["--min-ndcg", "1.5"] + judged, "--min-ndcg must be between 0 and 1"),
        ] {
            let result = try await GenerationCLITests.generation(ws, "promote", main, arguments)
            #expect(result.exitCode == 1, "\(arguments): \(result)")
            #expect(result.stderr.contains(reason), "\(arguments): \(result)")
        }

        // Equal to the active one, and below 1 (q6 has no answer in the corpus): --min-ndcg 1 refuses it.
        let refused = try await GenerationCLITests.generation(ws, "promote", main, judged + ["--min-ndcg", "1"])
        #expect(refused.exitCode == 8, "\(refused)")
        #expect(refused.stderr.contains("below --min-ndcg 1.000"), "\(refused)")
        expectSameExport(try await ws.export(main), export, "after the refused promote")
        let comparison = try #require(try await Self.status(ws, main)["comparison"] as? [String: Any])
        let figure = try #require(comparison["candidateNDCG"] as? Double)
        #expect(comparison["minimum"] as? Double == 1 && figure < 1 && figure > 0, "\(comparison)")
        #expect(comparison["activeNDCG"] as? Double == figure, "the two chunkings should answer alike: \(comparison)")

        // A bar at its score is met; and not below the active one (equal) by default.
        let atBar = try await GenerationCLITests.generation(
            ws,
            "promote",
            main,
            judged + ["--min-ndcg", String(format: "%.3f", figure - 0.0005)]
        )
        #expect(atBar.exitCode == 0, "\(atBar)")
        #expect(atBar.stdout.contains("quality check passed") && atBar.stdout.contains("g1 is active"), "\(atBar)")
        #expect(try await GenerationCLITests.generation(ws, "rollback", main).exitCode == 0)
        let equal = try await GenerationCLITests.generation(ws, "promote", main, judged)
        #expect(equal.exitCode == 0 && equal.stdout.contains("quality check passed"), "\(equal)")

        // Without a judged query file, promote checks completeness only, and says so.
        #expect(try await GenerationCLITests.generation(ws, "rollback", main).exitCode == 0)
        let unchecked = try await GenerationCLITests.generation(ws, "promote", main)
        #expect(unchecked.exitCode == 0, "\(unchecked)")
        #expect(unchecked.stdout.contains("no quality check was made: no judged query file"), "\(unchecked)")
    }

    @Test("generation status --json: active, candidate and previous with settings, completeness and documents")
    func statusJSONShape() async throws {
        let (ws, main) = try await Self.indexed("gate-status", configured: false)
        defer { ws.cleanUp() }
        var status = try await Self.status(ws, main)
        #expect(Set(status.keys) == ["active", "candidate", "previous", "comparison", "shards"], "\(status)")
        #expect(status.values.allSatisfy { $0 is NSNull }, "no generations yet: \(status)")

        #expect(try await GenerationCLITests.generation(ws, "start", main, Self.equal).exitCode == 0)
        status = try await Self.status(ws, main)
        let active = try #require(status["active"] as? [String: Any], "\(status)")
        #expect(active["id"] as? String == "g0" && active["role"] as? String == "active")
        #expect(active["overrides"] as? [String] == [] && active["embedder"] as? String != nil, "\(active)")
        #expect((active["documents"] as? [String: Int])?["indexed"] == Self.documents.count, "\(active)")
        #expect((active["completeness"] as? [String: Any])?["complete"] as? Bool == true, "\(active)")
        var candidate = try #require(status["candidate"] as? [String: Any], "\(status)")
        #expect(candidate["id"] as? String == "g1" && candidate["overrides"] as? [String] == ["chunk.max_tokens=300"])
        var completeness = try #require(candidate["completeness"] as? [String: Any], "\(candidate)")
        #expect(completeness["complete"] as? Bool == false, "\(completeness)")
        #expect(completeness["missing"] as? Int == Self.documents.count, "\(completeness)")
        #expect(status["previous"] is NSNull && status["comparison"] is NSNull, "\(status)")

        try await ws.run(main, expecting: 0)
        candidate = try #require(try await Self.status(ws, main)["candidate"] as? [String: Any])
        completeness = try #require(candidate["completeness"] as? [String: Any], "\(candidate)")
        #expect(completeness["complete"] as? Bool == true && completeness["missing"] as? Int == 0, "\(completeness)")
        #expect((candidate["documents"] as? [String: Int])?["indexed"] == Self.documents.count, "\(candidate)")
        #expect((candidate["vectors"] as? Int ?? 0) > 0 && (candidate["bytes"] as? Int ?? 0) > 0, "\(candidate)")

        #expect(try await GenerationCLITests.generation(ws, "promote", main).exitCode == 0)
        status = try await Self.status(ws, main)
        #expect((status["active"] as? [String: Any])?["id"] as? String == "g1", "\(status)")
        #expect((status["previous"] as? [String: Any])?["id"] as? String == "g0", "\(status)")
        #expect(status["candidate"] is NSNull, "\(status)")
    }
}
